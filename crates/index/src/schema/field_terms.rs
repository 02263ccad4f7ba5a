//! Keyword values, field existence and the words of named text fields as terms of the
//! inverted index.
//!
//! A keyword value is matched exactly, as a term is: so each is indexed as one, beside the
//! words of the text, under a name no word can take. The analyzer yields words of letters,
//! digits and marks, never a control character, and field names hold none either, so a term
//! starting with `\u{1}` is a keyword value (`\u{1}section\u{1}games`) and one starting with
//! `\u{2}` says a document has a field (`\u{2}homepage`), and neither can be confused with a
//! word or with each other. Such terms are not words of the document: they add nothing to its
//! length, so BM25 scores text exactly as it would without them.
//!
//! A word of a text field indexed under its own name (every text field of a mapping whose text
//! is not joined, see [`crate::schema::Mapping::joined_text`]) is the term
//! `\u{3}field\u{3}word`: each field has its own postings, document frequencies, lengths and
//! average length, and BM25 scores it as Lucene scores a field. Words of the default field
//! (a tab-separated document's title and body) carry no mark.

/// The first character of a keyword-value term.
pub const KEYWORD_MARK: char = '\u{1}';
/// The first character of a field-existence term.
pub const EXISTS_MARK: char = '\u{2}';

/// The first character of a word of a named text field.
pub const TEXT_MARK: char = '\u{3}';

/// The term a `word` of the text field `field` is indexed under; the word itself for the
/// default field (`field` empty).
pub fn text_term(field: &str, word: &str) -> String {
    if field.is_empty() {
        return word.to_owned();
    }
    let mut term = String::with_capacity(field.len() + word.len() + 2);
    term.push(TEXT_MARK);
    term.push_str(field);
    term.push(TEXT_MARK);
    term.push_str(word);
    term
}

/// The text field a term's word belongs to and the word: `("", term)` for a word of the default
/// field; `None` for a keyword value or an existence mark.
pub fn text_field_of(term: &str) -> Option<(&str, &str)> {
    if let Some(rest) = term.strip_prefix(TEXT_MARK) {
        return rest.split_once(TEXT_MARK);
    }
    is_word(term).then_some(("", term))
}

/// The term prefix every word of the text field `field` starts with (empty for the default
/// field, whose words carry none).
pub fn text_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{TEXT_MARK}{field}{TEXT_MARK}")
    }
}

/// The term a keyword `value` of `field` is indexed under.
pub fn keyword_term(field: &str, value: &str) -> String {
    let mut term = String::with_capacity(field.len() + value.len() + 2);
    term.push(KEYWORD_MARK);
    term.push_str(field);
    term.push(KEYWORD_MARK);
    term.push_str(value);
    term
}

/// The term every document with a value of `field` holds.
pub fn exists_term(field: &str) -> String {
    let mut term = String::with_capacity(field.len() + 1);
    term.push(EXISTS_MARK);
    term.push_str(field);
    term
}

/// Whether `term` is a word of the default field (not a keyword value, an existence mark or
/// a word of a named text field).
pub fn is_word(term: &str) -> bool {
    !term.starts_with([KEYWORD_MARK, EXISTS_MARK, TEXT_MARK])
}

/// `term` as a person reads it: words as they are, `field:value` for keyword values and
/// `_exists_:field` for existence marks.
pub fn display(term: &str) -> String {
    if let Some(rest) = term.strip_prefix(KEYWORD_MARK) {
        if let Some((field, value)) = rest.split_once(KEYWORD_MARK) {
            return format!("{field}:{value}");
        }
    }
    if let Some(field) = term.strip_prefix(EXISTS_MARK) {
        return format!("_exists_:{field}");
    }
    if let Some((field, word)) = text_field_of(term) {
        if !field.is_empty() {
            return format!("{field}:{word}");
        }
    }
    term.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_terms_are_not_words_and_read_back() {
        let term = keyword_term("section", "games");
        assert!(!is_word(&term));
        assert_eq!(display(&term), "section:games");
        assert_eq!(display(&exists_term("homepage")), "_exists_:homepage");
        assert!(is_word("games"));
        // A value that holds the separator still reads back whole.
        assert_eq!(display(&keyword_term("a", "b\u{1}c")), "a:b\u{1}c");
        let word = text_term("summary", "games");
        assert!(!is_word(&word));
        assert_eq!(text_field_of(&word), Some(("summary", "games")));
        assert!(word.starts_with(&text_prefix("summary")));
        assert_eq!(display(&word), "summary:games");
        assert_eq!(text_term("", "games"), "games");
        assert_eq!(text_field_of("games"), Some(("", "games")));
        assert_eq!(text_field_of(&keyword_term("a", "b")), None);
    }
}
