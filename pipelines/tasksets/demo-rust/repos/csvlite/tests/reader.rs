use csvlite::{Error, Reader};

fn fields(input: &str) -> Vec<Vec<String>> {
    Reader::new(input).flexible(true).records().unwrap().into_iter().map(|r| r.fields).collect()
}

fn row(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn simple_rows() {
    assert_eq!(fields("a,b,c\n1,2,3\n"), vec![row(&["a", "b", "c"]), row(&["1", "2", "3"])]);
}

#[test]
fn crlf_line_ends() {
    assert_eq!(fields("a,b\r\n1,2\r\n"), vec![row(&["a", "b"]), row(&["1", "2"])]);
}

#[test]
fn no_trailing_newline() {
    assert_eq!(fields("a,b\n1,2"), vec![row(&["a", "b"]), row(&["1", "2"])]);
}

#[test]
fn empty_fields() {
    assert_eq!(fields(",a,,\n"), vec![row(&["", "a", "", ""])]);
}

#[test]
fn blank_lines_are_skipped() {
    assert_eq!(fields("a\n\n\nb\n"), vec![row(&["a"]), row(&["b"])]);
}

#[test]
fn quoted_field_with_delimiter() {
    assert_eq!(fields("\"Smith, J\",42\n"), vec![row(&["Smith, J", "42"])]);
}

#[test]
fn doubled_quotes() {
    assert_eq!(fields("\"say \"\"hi\"\"\",x\n"), vec![row(&["say \"hi\"", "x"])]);
}

#[test]
fn quoted_empty_field() {
    assert_eq!(fields("\"\",a\n"), vec![row(&["", "a"])]);
}

#[test]
fn quoted_field_at_end_of_input() {
    assert_eq!(fields("a,\"b\""), vec![row(&["a", "b"])]);
}

#[test]
fn embedded_newline_in_quotes() {
    let records = Reader::new("id,note\n1,\"two\nlines\"\n2,x\n").records().unwrap();
    assert_eq!(records[1].fields, row(&["1", "two\nlines"]));
    assert_eq!(records[2].line, 4);
}

#[test]
fn record_lines() {
    let records = Reader::new("a\nb\r\nc\n").records().unwrap();
    let lines: Vec<usize> = records.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![1, 2, 3]);
}

#[test]
fn custom_delimiter() {
    let records = Reader::new("a;b;\"c;d\"\n").delimiter(';').records().unwrap();
    assert_eq!(records[0].fields, row(&["a", "b", "c;d"]));
}

#[test]
fn tab_delimiter() {
    let records = Reader::new("a\tb\n1\t2\n").delimiter('\t').records().unwrap();
    assert_eq!(records[1].fields, row(&["1", "2"]));
}

#[test]
fn trim_unquoted_only() {
    let records = Reader::new(" a ,\" b \",c\n").trim(true).records().unwrap();
    assert_eq!(records[0].fields, row(&["a", " b ", "c"]));
}

#[test]
fn no_trim_by_default() {
    assert_eq!(fields(" a ,b\n"), vec![row(&[" a ", "b"])]);
}

#[test]
fn unterminated_quote_is_an_error() {
    let err = Reader::new("a,b\n1,\"open\n2,3\n").records().unwrap_err();
    assert_eq!(err, Error::UnterminatedQuote { line: 2 });
}

#[test]
fn text_after_closing_quote_is_an_error() {
    let err = Reader::new("\"a\"b,c\n").records().unwrap_err();
    assert_eq!(err, Error::TextAfterQuote { line: 1 });
}

#[test]
fn field_count_mismatch() {
    let err = Reader::new("a,b\n1,2\n3\n").records().unwrap_err();
    assert_eq!(err, Error::FieldCount { line: 3, expected: 2, found: 1 });
    assert_eq!(err.to_string(), "line 3: expected 2 fields, found 1");
}

#[test]
fn flexible_allows_ragged_rows() {
    assert_eq!(fields("a,b\n1\n"), vec![row(&["a", "b"]), row(&["1"])]);
}

#[test]
fn headers_and_lookup() {
    let mut reader = Reader::new("name,age\r\n\"Smith, J\",42\r\n").has_headers(true);
    let records = reader.records().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(reader.headers().unwrap(), &row(&["name", "age"])[..]);
    assert_eq!(reader.get(&records[0], "name"), Some("Smith, J"));
    assert_eq!(reader.get(&records[0], "age"), Some("42"));
    assert_eq!(reader.get(&records[0], "email"), None);
}

#[test]
fn empty_input() {
    assert!(fields("").is_empty());
    assert!(Reader::new("").has_headers(true).records().unwrap().is_empty());
}
