//! Words of named text fields: a clause on one text field (`summary:game`), and words
//! without a field searched in several (the default fields).
//!
//! The parser reads words as the default field's; these rewrites then put them in the field
//! a clause names ([`in_field`]), or spread each over the default fields ([`across_fields`]),
//! as Lucene's `MultiFieldQueryParser` does: a word becomes a disjunction of the word in each
//! field, and so does a phrase. Keyword values, existence marks and words already in a field
//! are left as they are.

use super::ast::{BoolQuery, DisMaxQuery, Factor, PhraseQuery, Query};
use super::error::QueryError;
use crate::schema::{field_terms, FieldType, Mapping};

/// `query` with every word and phrase of the default field searched in the text field
/// `field` instead.
pub fn in_field(query: Query, field: &str) -> Query {
    map_default_words(query, &mut |word| match word {
        DefaultWords::Term(word) => Query::Term(field_terms::text_term(field, word)),
        DefaultWords::Phrase(phrase) => Query::Phrase(phrase_in(phrase, field)),
    })
}

/// How the clauses of one word in several fields combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Any field matching, their scores added (Lucene's `MultiFieldQueryParser`,
    /// Elasticsearch's `most_fields`).
    Sum,
    /// Any field matching, the best field's score plus the tie breaker times the others'
    /// (Elasticsearch's `best_fields`, its default).
    DisMax(Factor),
}

/// The text fields words without a field search, each with the factor of its scores
/// (`title^3`), and how a word's clauses in them combine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultFields {
    /// The fields and their boosts; empty: every text field of the mapping, boost 1.
    pub fields: Vec<(String, Factor)>,
    /// How a word's clauses combine.
    pub combine: Combine,
}

impl Default for DefaultFields {
    /// Every text field, scores added.
    fn default() -> DefaultFields {
        DefaultFields {
            fields: Vec::new(),
            combine: Combine::Sum,
        }
    }
}

impl DefaultFields {
    /// The fields of `names` as requests write them: `title` or `title^3`; scores added.
    pub fn parse(names: &[String]) -> Result<DefaultFields, QueryError> {
        let fields = names
            .iter()
            .map(|name| match name.split_once('^') {
                None => Ok((name.clone(), Factor::ONE)),
                Some((field, boost)) => boost
                    .parse::<f32>()
                    .ok()
                    .and_then(Factor::new)
                    .map(|boost| (field.to_owned(), boost))
                    .ok_or_else(|| QueryError::InvalidFieldValue {
                        field: field.to_owned(),
                        value: name.clone(),
                        reason: "not a field with a boost (field^2)".into(),
                    }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DefaultFields {
            fields,
            combine: Combine::Sum,
        })
    }

    /// `query` with its words without a field spread over these fields (every text field of
    /// `mapping` when none is named), each field checked to be a text field of `mapping`; as it
    /// is under a mapping that joins its text fields ([`Mapping::joined_text`]), whose words
    /// are the default field's.
    pub fn spread(&self, query: Query, mapping: &Mapping) -> Result<Query, QueryError> {
        if mapping.joined_text() {
            return Ok(query);
        }
        if self.fields.is_empty() {
            let every: Vec<(String, Factor)> = mapping
                .text_fields()
                .map(|field| (field.to_owned(), Factor::ONE))
                .collect();
            return Ok(across_fields(query, &every, self.combine));
        }
        for (field, _) in &self.fields {
            check_text_field(mapping, field)?;
        }
        Ok(across_fields(query, &self.fields, self.combine))
    }

    /// The same fields, a word's clauses combined by `combine`.
    pub fn combined_by(mut self, combine: Combine) -> DefaultFields {
        self.combine = combine;
        self
    }
}

/// Refuses `field` unless it is a text field of `mapping`.
pub fn check_text_field(mapping: &Mapping, field: &str) -> Result<(), QueryError> {
    match mapping.resolve(field) {
        Some(resolved) if matches!(resolved.field_type.as_ref(), FieldType::Text(_)) => Ok(()),
        Some(_) => Err(QueryError::InvalidFieldValue {
            field: field.to_owned(),
            value: String::new(),
            reason: "not a text field: words are searched in text fields".into(),
        }),
        None => Err(QueryError::UnknownField {
            field: field.to_owned(),
        }),
    }
}

/// `query` with every word and phrase of the default field searched in each of `fields`
/// instead, any of them matching, combined as `combine` says and each field's clause scaled
/// by its boost. With no fields the query is left as it is.
pub fn across_fields(query: Query, fields: &[(String, Factor)], combine: Combine) -> Query {
    if fields.is_empty() {
        return query;
    }
    let boosted = |query: Query, boost: Factor| {
        if boost == Factor::ONE {
            query
        } else {
            Query::Boost(Box::new(query), boost)
        }
    };
    if let [(field, boost)] = fields {
        let (field, boost) = (field.clone(), *boost);
        return map_default_words(query, &mut |words| {
            let query = match words {
                DefaultWords::Term(word) => Query::Term(field_terms::text_term(&field, word)),
                DefaultWords::Phrase(phrase) => Query::Phrase(phrase_in(phrase, &field)),
            };
            boosted(query, boost)
        });
    }
    map_default_words(query, &mut |words| {
        let queries = fields
            .iter()
            .map(|(field, boost)| {
                let query = match &words {
                    DefaultWords::Term(word) => Query::Term(field_terms::text_term(field, word)),
                    DefaultWords::Phrase(phrase) => Query::Phrase(phrase_in(phrase, field)),
                };
                boosted(query, *boost)
            })
            .collect();
        match combine {
            Combine::Sum => Query::Bool(BoolQuery {
                should: queries,
                ..BoolQuery::default()
            }),
            Combine::DisMax(tie_breaker) => Query::DisMax(DisMaxQuery {
                queries,
                tie_breaker,
            }),
        }
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
        let fields = DefaultFields::parse(&["summary".into(), "description^2".into()]).unwrap();
        assert_eq!(
            across_fields(query.clone(), &fields.fields, Combine::Sum).to_string(),
            "+(summary:game description:game^2) +section:games (summary:\"board game\" description:\"board game\"^2)"
        );
        assert_eq!(
            across_fields(query, &fields.fields, Combine::DisMax(Factor::new(0.5).unwrap()))
                .to_string(),
            "+(summary:game | description:game^2)~0.5 +section:games (summary:\"board game\" | description:\"board game\"^2)~0.5"
        );
        // A word already in a field is not moved again.
        let placed = Query::Term(field_terms::text_term("title", "x"));
        assert_eq!(
            across_fields(placed.clone(), &fields.fields, Combine::Sum),
            placed
        );
        assert!(DefaultFields::parse(&["title^x".into()]).is_err());
    }
}
