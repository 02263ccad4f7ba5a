use serde_json::json;

use super::*;

fn debian_mapping() -> Mapping {
    Mapping::from_json(&json!({
        "properties": {
            "package": {"type": "keyword"},
            "section": {"type": "keyword"},
            "installed_size": {"type": "long"},
            "summary": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 20}}},
            "depends": {"type": "keyword"},
            "essential": {"type": "boolean"},
            "released": {"type": "date"},
            "score": {"type": "double"},
            "meta": {"properties": {"origin": {"type": "keyword"}}}
        }
    }))
    .unwrap()
}

#[test]
fn a_mapping_reads_and_writes_elasticsearch_json() {
    let mapping = debian_mapping();
    assert_eq!(
        mapping.get("meta.origin").map(FieldType::name),
        Some("keyword")
    );
    assert!(mapping.is_object("meta"));
    let again = Mapping::from_json(&mapping.to_json()).unwrap();
    assert_eq!(again, mapping);
    let wrapped = Mapping::from_json(&json!({"mappings": mapping.to_json()})).unwrap();
    assert_eq!(wrapped, mapping);
    assert_eq!(
        mapping.to_json()["properties"]["meta"]["properties"]["origin"],
        json!({"type": "keyword"})
    );
    let sub = mapping.resolve("summary.keyword").unwrap();
    assert_eq!(sub.field_type.name(), "keyword");
    assert!(mapping.resolve("summary.other").is_none());
}

#[test]
fn unsupported_types_and_parameters_are_refused_by_name() {
    let error = Mapping::from_json(&json!({"properties": {"p": {"type": "geo_point"}}}));
    assert!(error
        .unwrap_err()
        .to_string()
        .contains("unsupported type [geo_point]"));
    let error =
        Mapping::from_json(&json!({"properties": {"p": {"type": "keyword", "doc_values": false}}}));
    assert!(error.unwrap_err().to_string().contains("[doc_values]"));
    let error =
        Mapping::from_json(&json!({"properties": {"p": {"type": "text", "analyzer": "french"}}}));
    assert!(error.unwrap_err().to_string().contains("[analyzer]"));
    let error =
        Mapping::from_json(&json!({"properties": {"p": {"type": "date", "format": "dd/MM"}}}));
    assert!(error.unwrap_err().to_string().contains("[format]"));
    let error = Mapping::from_json(&json!({"dynamic": "sometimes"}));
    assert!(error.unwrap_err().to_string().contains("dynamic"));
    let mixed = Mapping::from_json(&json!({"properties": {
        "a": {"type": "text", "analyzer": "english"},
        "b": {"type": "text", "analyzer": "standard"}
    }}))
    .unwrap();
    assert!(mixed.analyzer().is_err());
}

#[test]
fn documents_map_to_texts_keywords_numbers_and_presence() {
    let mut mapper = Mapper::new(debian_mapping(), Some("id".into()));
    let document = json!({
        "id": "vim", "package": "vim", "section": "editors", "installed_size": "3000",
        "summary": "Vi IMproved - enhanced vi editor", "depends": ["libc6", "libgpm2", null],
        "essential": false, "released": "2024-01-02", "score": -1.5,
        "meta": {"origin": "debian"}
    });
    let mapped = mapper.map(&document).unwrap();
    assert_eq!(mapped.id.as_deref(), Some("vim"));
    // `id` is not mapped: dynamic mapping makes it text (and `id.keyword`).
    assert_eq!(mapped.texts, ["vim", "Vi IMproved - enhanced vi editor"]);
    let keywords: Vec<(&str, &str)> = mapped
        .keywords
        .iter()
        .map(|(f, v)| (f.as_str(), v.as_str()))
        .collect();
    // The summary is longer than its sub-field's ignore_above: not a keyword.
    assert_eq!(
        keywords,
        [
            ("id.keyword", "vim"),
            ("package", "vim"),
            ("section", "editors"),
            ("depends", "libc6"),
            ("depends", "libgpm2"),
            ("meta.origin", "debian"),
        ]
    );
    let numbers: Vec<(&str, i64)> = mapped
        .numbers
        .iter()
        .map(|(f, v)| (f.as_str(), *v))
        .collect();
    assert_eq!(
        numbers,
        [
            ("installed_size", 3000),
            ("essential", 0),
            ("released", 1_704_153_600_000),
            ("score", crate::columns::double_to_sortable(-1.5)),
        ]
    );
    // `id` is not mapped, so dynamic mapping adds it.
    assert_eq!(
        mapper.mapping().get("id").map(FieldType::name),
        Some("text")
    );
    assert!(mapped.present.contains(&"id.keyword".to_string()));
}

#[test]
fn a_document_that_does_not_fit_is_refused_whole() {
    let mut mapper = Mapper::new(debian_mapping(), None);
    for (document, field) in [
        (json!({"installed_size": "large"}), "installed_size"),
        (json!({"section": {"main": true}}), "section"),
        (json!({"meta": "debian"}), "meta"),
        (json!({"essential": 3}), "essential"),
        (json!({"released": "soon"}), "released"),
    ] {
        let error = mapper.map(&document).unwrap_err();
        assert!(
            matches!(&error, DocumentError::Field { field: f, .. } if f == field),
            "{document}: {error}"
        );
    }
    // The new field of a refused document is not added.
    let version = mapper.version();
    assert!(mapper
        .map(&json!({"fresh": "x", "installed_size": "big"}))
        .is_err());
    assert!(mapper.mapping().get("fresh").is_none());
    assert_eq!(mapper.version(), version);
    let error = mapper.map(&json!({"_routing": "x"})).unwrap_err();
    assert!(matches!(error, DocumentError::MetadataField(_)));
    assert!(matches!(
        mapper.map(&json!([1])),
        Err(DocumentError::NotAnObject)
    ));
}

#[test]
fn integers_keep_their_range_and_coerce_as_elasticsearch_does() {
    let mut mapper = Mapper::new(
        Mapping::from_json(&json!({"properties": {"b": {"type": "byte"}, "l": {"type": "long"}}}))
            .unwrap(),
        None,
    );
    let mapped = mapper.map(&json!({"b": 12.9, "l": "-7"})).unwrap();
    assert_eq!(mapped.numbers, [("b".into(), 12), ("l".into(), -7)]);
    assert!(mapper.map(&json!({"b": 300})).is_err());
    assert!(mapper.map(&json!({"l": 1e300})).is_err());
}

#[test]
fn dynamic_mapping_infers_types_as_elasticsearch_does() {
    let mut mapper = Mapper::new(Mapping::default(), None);
    mapper
        .map(
            &json!({"n": 3, "x": 1.5, "b": true, "d": "2024-05-06T07:08:09Z", "s": "hello",
                     "o": {"inner": [1, 2]}, "empty": [], "nothing": null}),
        )
        .unwrap();
    let mapping = mapper.mapping();
    let types: Vec<(&str, &str)> = mapping.fields().map(|(n, t)| (n, t.name())).collect();
    assert_eq!(
        types,
        [
            ("b", "boolean"),
            ("d", "date"),
            ("n", "long"),
            ("o.inner", "long"),
            ("s", "text"),
            ("x", "double")
        ]
    );
    assert_eq!(
        mapping.to_json()["properties"]["s"],
        json!({"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}})
    );
    // Later documents are held to what the first ones set.
    assert!(mapper.map(&json!({"n": "three"})).is_err());
}

#[test]
fn strict_and_false_mappings_treat_unknown_fields_as_elasticsearch_does() {
    let strict =
        Mapping::from_json(&json!({"dynamic": "strict", "properties": {"a": {"type": "keyword"}}}))
            .unwrap();
    let mut mapper = Mapper::new(strict, None);
    assert!(mapper.map(&json!({"a": "x"})).is_ok());
    assert!(
        matches!(mapper.map(&json!({"b": "x"})), Err(DocumentError::StrictUnknown(f)) if f == "b")
    );
    let ignoring =
        Mapping::from_json(&json!({"dynamic": false, "properties": {"a": {"type": "keyword"}}}))
            .unwrap();
    let mut mapper = Mapper::new(ignoring, None);
    let mapped = mapper.map(&json!({"a": "x", "b": {"c": 1}})).unwrap();
    assert_eq!(mapped.present, ["a"]);
    assert!(mapper.mapping().get("b.c").is_none());
}

#[test]
fn ids_are_unique_single_words() {
    let mut mapper = Mapper::new(Mapping::default(), Some("id".into()));
    assert_eq!(
        mapper
            .map(&json!({"_id": 7, "t": "a"}))
            .unwrap()
            .id
            .as_deref(),
        Some("7")
    );
    assert!(matches!(
        mapper.map(&json!({"id": "7"})),
        Err(DocumentError::DuplicateId(_))
    ));
    assert!(matches!(
        mapper.map(&json!({"_id": "a b"})),
        Err(DocumentError::Id(_))
    ));
    assert!(matches!(
        mapper.map(&json!({"_id": ""})),
        Err(DocumentError::Id(_))
    ));
    assert!(matches!(
        mapper.map(&json!({"_id": [1]})),
        Err(DocumentError::Id(_))
    ));
    assert!(mapper.map(&json!({"t": "no id"})).unwrap().id.is_none());
}
