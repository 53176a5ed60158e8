/// Writes one record, quoting the fields that need it (a delimiter, a quote, a line end, or
/// spaces at either end), with quotes doubled, and ends it with CRLF as RFC 4180 does.
pub fn write_record<S: AsRef<str>>(fields: &[S], delimiter: char) -> String {
    let mut out = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(delimiter);
        }
        let field = field.as_ref();
        let needs_quotes = field.contains(delimiter)
            || field.contains('"')
            || field.contains('\n')
            || field.contains('\r')
            || field.starts_with(' ')
            || field.ends_with(' ');
        if needs_quotes {
            out.push('"');
            out.push_str(&field.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(field);
        }
    }
    out.push_str("\r\n");
    out
}

/// Collects records into one CSV document.
pub struct Writer {
    delimiter: char,
    out: String,
}

impl Writer {
    pub fn new(delimiter: char) -> Self {
        Writer { delimiter, out: String::new() }
    }

    pub fn write<S: AsRef<str>>(&mut self, fields: &[S]) -> &mut Self {
        self.out.push_str(&write_record(fields, self.delimiter));
        self
    }

    pub fn finish(self) -> String {
        self.out
    }
}
