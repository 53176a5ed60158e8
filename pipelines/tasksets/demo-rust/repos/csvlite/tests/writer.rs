use csvlite::{write_record, Reader, Writer};

#[test]
fn plain_fields_are_not_quoted() {
    assert_eq!(write_record(&["a", "b", "1"], ','), "a,b,1\r\n");
}

#[test]
fn delimiter_and_quotes_are_quoted() {
    assert_eq!(write_record(&["a,b", "say \"hi\""], ','), "\"a,b\",\"say \"\"hi\"\"\"\r\n");
}

#[test]
fn newlines_are_quoted() {
    assert_eq!(write_record(&["two\nlines", "cr\r"], ','), "\"two\nlines\",\"cr\r\"\r\n");
}

#[test]
fn edge_spaces_are_quoted() {
    assert_eq!(write_record(&[" a", "b ", "c d"], ','), "\" a\",\"b \",c d\r\n");
}

#[test]
fn other_delimiter() {
    assert_eq!(write_record(&["a;b", "a,b"], ';'), "\"a;b\";a,b\r\n");
}

#[test]
fn writer_collects_records() {
    let mut w = Writer::new(',');
    w.write(&["x", "y"]).write(&["1", "2"]);
    assert_eq!(w.finish(), "x,y\r\n1,2\r\n");
}

#[test]
fn round_trip() {
    let rows = vec![
        vec!["id".to_string(), "note".to_string()],
        vec!["1".to_string(), "said \"ok\", then\nleft".to_string()],
        vec!["2".to_string(), " padded ".to_string()],
    ];
    let mut w = Writer::new(',');
    for r in &rows {
        w.write(r);
    }
    let text = w.finish();
    let back: Vec<Vec<String>> = Reader::new(&text).records().unwrap().into_iter().map(|r| r.fields).collect();
    assert_eq!(back, rows);
}
