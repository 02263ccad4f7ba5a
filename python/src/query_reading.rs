//! [`QueryReading`]: how `Index`'s methods turn query text into a [`Query`] under the index's
//! mapping: plain words or Lucene syntax, the text fields words without a field search
//! (`default_field`), and a filter that narrows without scoring.
//!
//! One reading for every method, so that `search`, `count`, `collection_stats` and
//! `batch_search` agree on what a text means. Under a mapping whose text fields keep their own
//! names, a word without a field searches each default field (every text field unless
//! `default_field` names some), plain words as much as Lucene syntax; under the title/body
//! layout, whose text is one field, words search it and `default_field` is refused.

use apcache_index::analyzer::Analyzer;
use apcache_index::plain_query::plain_query;
use apcache_index::query::{
    check_text_field, parse_query_in_fields, BoolQuery, DefaultFields, DefaultOperator, Query,
};
use apcache_index::schema::Mapping;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::arguments::Parse;
use crate::errors::{parse_error, query_error};

/// What query text is read with.
pub(crate) struct QueryReading<'a> {
    pub(crate) analyzer: &'a Analyzer,
    pub(crate) mapping: &'a Mapping,
    pub(crate) parse: Parse,
    pub(crate) default_op: DefaultOperator,
    pub(crate) default_fields: DefaultFields,
}

/// The `default_field` argument: None (every text field), a field name, or a list of them,
/// each with an optional boost (`"title^3"`), every one a text field of `mapping`.
pub(crate) fn default_fields_arg(
    value: Option<&Bound<'_, PyAny>>,
    mapping: &Mapping,
) -> PyResult<DefaultFields> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(DefaultFields::default());
    };
    let names: Vec<String> = if value.is_instance_of::<PyString>() {
        vec![value.extract()?]
    } else {
        value.extract().map_err(|_| {
            PyTypeError::new_err("default_field is a text field's name or a list of them")
        })?
    };
    if mapping.joined_text() {
        return Err(PyValueError::new_err(
            "default_field: this index's title and body are one text field (title/body \
             documents); its words are searched together",
        ));
    }
    let fields = DefaultFields::parse(&names)
        .map_err(|e| PyValueError::new_err(format!("default_field: {e}")))?;
    for (field, _) in &fields.fields {
        check_text_field(mapping, field)
            .map_err(|e| PyValueError::new_err(format!("default_field: {e}")))?;
    }
    Ok(fields)
}

impl QueryReading<'_> {
    /// `text` as a query.
    pub(crate) fn read(&self, py: Python<'_>, text: &str) -> PyResult<Query> {
        match self.parse {
            Parse::Plain => Ok(self.plain(text)),
            Parse::Lucene => self.lucene(py, text),
        }
    }

    /// `query`, narrowed to the documents `filter` (Lucene syntax whatever `parse` says: it
    /// names fields) matches, which adds nothing to the scores.
    pub(crate) fn filtered(&self, py: Python<'_>, query: Query, filter: &str) -> PyResult<Query> {
        let filter = self.lucene(py, filter).map_err(|e| {
            let position = e.value(py).getattr("position").and_then(|p| p.extract());
            query_error(
                py,
                format!("filter: {}", e.value(py)),
                position.unwrap_or(None),
            )
        })?;
        Ok(Query::Bool(BoolQuery {
            must: vec![query, Query::Filter(Box::new(filter))],
            ..BoolQuery::default()
        }))
    }

    fn lucene(&self, py: Python<'_>, text: &str) -> PyResult<Query> {
        parse_query_in_fields(
            text,
            self.analyzer,
            self.default_op,
            self.mapping,
            &self.default_fields,
        )
        .map(|(query, _)| query)
        .map_err(|e| parse_error(py, &e, text))
    }

    /// A bag of words, each searched in the default fields as a Lucene word would be.
    fn plain(&self, text: &str) -> Query {
        let query = plain_query(text, self.analyzer);
        // The fields were checked when `default_field` was read.
        self.default_fields
            .spread(query.clone(), self.mapping)
            .unwrap_or(query)
    }
}
