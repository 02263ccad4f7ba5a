//! Words of named text fields: a clause on one text field (`summary:game`), and words
//! without a field searched in several (the default fields).
//!
//! The parser reads words as the default field's; these rewrites then put them in the field
//! a clause names ([`in_field`]), or spread each over the default fields ([`across_fields`]),
//! as Lucene's `MultiFieldQueryParser` does: a word becomes a disjunction of the word in each
//! field, and so does a phrase. Keyword values, existence marks and words already in a field
//! are left as they are.

use super::ast::{BoolQuery, DisMaxQuery, PhraseQuery, Query};
use crate::schema::field_terms;

/// `query` with every word and phrase of the default field searched in the text field
/// `field` instead.
pub fn in_field(query: Query, field: &str) -> Query {
    map_default_words(query, &mut |word| match word {
        DefaultWords::Term(word) => Query::Term(field_terms::text_term(field, word)),
        DefaultWords::Phrase(phrase) => Query::Phrase(phrase_in(phrase, field)),
    })
}

/// `query` with every word and phrase of the default field searched in each of `fields`
/// instead, any of them matching (Lucene's `MultiFieldQueryParser`: the clauses' scores
/// add up). With no fields the query is left as it is.
pub fn across_fields(query: Query, fields: &[String]) -> Query {
    if fields.is_empty() {
        return query;
    }
    if let [field] = fields {
        return in_field(query, field);
    }
    map_default_words(query, &mut |words| {
        let should = fields
            .iter()
            .map(|field| match &words {
                DefaultWords::Term(word) => Query::Term(field_terms::text_term(field, word)),
                DefaultWords::Phrase(phrase) => Query::Phrase(phrase_in(phrase, field)),
            })
            .collect();
        Query::Bool(BoolQuery {
            should,
            ..BoolQuery::default()
        })
    })
}

/// A word or a phrase of the default field.
enum DefaultWords<'q> {
    Term(&'q str),
    Phrase(&'q PhraseQuery),
}

fn phrase_in(phrase: &PhraseQuery, field: &str) -> PhraseQuery {
    PhraseQuery {
        terms: phrase
            .terms
            .iter()
            .map(|(position, word)| (*position, field_terms::text_term(field, word)))
            .collect(),
        slop: phrase.slop,
    }
}

/// `query` with each word and phrase of the default field replaced by what `replace` makes of
/// it.
fn map_default_words(query: Query, replace: &mut dyn FnMut(DefaultWords<'_>) -> Query) -> Query {
    match query {
        Query::Term(term) if field_terms::is_word(&term) => replace(DefaultWords::Term(&term)),
        Query::Phrase(phrase)
            if phrase
                .terms
                .first()
                .is_some_and(|(_, t)| field_terms::is_word(t)) =>
        {
            replace(DefaultWords::Phrase(&phrase))
        }
        Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        }) => {
            let mut map_all = |clauses: Vec<Query>| -> Vec<Query> {
                clauses
                    .into_iter()
                    .map(|clause| map_default_words(clause, replace))
                    .collect()
            };
            Query::Bool(BoolQuery {
                must: map_all(must),
                should: map_all(should),
                must_not: map_all(must_not),
            })
        }
        Query::Filter(inner) => Query::Filter(Box::new(map_default_words(*inner, replace))),
        Query::Boost(inner, factor) => {
            Query::Boost(Box::new(map_default_words(*inner, replace)), factor)
        }
        Query::DisMax(d) => Query::DisMax(DisMaxQuery {
            queries: d
                .queries
                .into_iter()
                .map(|q| map_default_words(q, replace))
                .collect(),
            tie_breaker: d.tie_breaker,
        }),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_move_into_fields_and_field_terms_stay() {
        let query = Query::Bool(BoolQuery {
            must: vec![
                Query::Term("game".into()),
                Query::Term(field_terms::keyword_term("section", "games")),
            ],
            should: vec![Query::Phrase(PhraseQuery {
                terms: vec![(0, "board".into()), (1, "game".into())],
                slop: 0,
            })],
            must_not: vec![],
        });
        assert_eq!(
            in_field(query.clone(), "summary").to_string(),
            "+summary:game +section:games summary:\"board game\""
        );
        let fields = ["summary".to_string(), "description".to_string()];
        assert_eq!(
            across_fields(query, &fields).to_string(),
            "+(summary:game description:game) +section:games (summary:\"board game\" description:\"board game\")"
        );
        // A word already in a field is not moved again.
        let placed = Query::Term(field_terms::text_term("title", "x"));
        assert_eq!(across_fields(placed.clone(), &fields), placed);
    }
}
