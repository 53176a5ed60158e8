use std::fmt;

/// One row: its fields, and the 1-based line it started on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub fields: Vec<String>,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A quoted field was still open at the end of the input.
    UnterminatedQuote { line: usize },
    /// A character other than the delimiter or a line end followed a closing quote.
    TextAfterQuote { line: usize },
    /// A row had another number of fields than the first one (only with `flexible(false)`).
    FieldCount { line: usize, expected: usize, found: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnterminatedQuote { line } => write!(f, "line {line}: unterminated quoted field"),
            Error::TextAfterQuote { line } => write!(f, "line {line}: text after a closing quote"),
            Error::FieldCount { line, expected, found } => {
                write!(f, "line {line}: expected {expected} fields, found {found}")
            }
        }
    }
}

impl std::error::Error for Error {}

pub struct Reader<'a> {
    input: &'a str,
    delimiter: char,
    has_headers: bool,
    flexible: bool,
    trim: bool,
    headers: Option<Vec<String>>,
}

impl<'a> Reader<'a> {
    pub fn new(input: &'a str) -> Self {
        Reader { input, delimiter: ',', has_headers: false, flexible: false, trim: false, headers: None }
    }

    pub fn delimiter(mut self, delimiter: char) -> Self {
        self.delimiter = delimiter;
        self
    }

    /// The first record names the columns and is not returned by `records`.
    pub fn has_headers(mut self, yes: bool) -> Self {
        self.has_headers = yes;
        self
    }

    /// Allow rows with different numbers of fields.
    pub fn flexible(mut self, yes: bool) -> Self {
        self.flexible = yes;
        self
    }

    /// Trim spaces around unquoted fields.
    pub fn trim(mut self, yes: bool) -> Self {
        self.trim = yes;
        self
    }

    pub fn headers(&self) -> Option<&[String]> {
        self.headers.as_deref()
    }

    /// The field of `record` in the column named `name` (needs `has_headers`).
    pub fn get<'r>(&self, record: &'r Record, name: &str) -> Option<&'r str> {
        let index = self.headers.as_ref()?.iter().position(|h| h == name)?;
        record.fields.get(index).map(String::as_str)
    }

    pub fn records(&mut self) -> Result<Vec<Record>, Error> {
        let mut rows = parse(self.input, self.delimiter, self.trim)?;
        if !self.flexible {
            if let Some(first) = rows.first() {
                let expected = first.fields.len();
                for row in &rows {
                    if row.fields.len() != expected {
                        return Err(Error::FieldCount { line: row.line, expected, found: row.fields.len() });
                    }
                }
            }
        }
        if self.has_headers && !rows.is_empty() {
            self.headers = Some(rows.remove(0).fields);
        }
        Ok(rows)
    }
}

fn parse(input: &str, delimiter: char, trim: bool) -> Result<Vec<Record>, Error> {
    let mut rows = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false; // the current field started with a quote
    let mut line = 1;
    let mut start_line = 1;
    let mut chars = input.chars().peekable();
    let finish = |field: &mut String, quoted: bool| {
        let value = std::mem::take(field);
        if trim && !quoted { value.trim().to_string() } else { value }
    };

    while let Some(c) = chars.next() {
        if c == '"' && field.trim().is_empty() && !quoted {
            // a quoted field: read up to the closing quote; "" is one quote
            quoted = true;
            field.clear();
            loop {
                match chars.next() {
                    None => return Err(Error::UnterminatedQuote { line: start_line }),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(ch) => {
                        if ch == '\n' {
                            line += 1;
                        }
                        field.push(ch);
                    }
                }
            }
            match chars.peek() {
                None | Some('\r') | Some('\n') => {}
                Some(&d) if d == delimiter => {}
                Some(_) => return Err(Error::TextAfterQuote { line }),
            }
        } else if c == delimiter {
            fields.push(finish(&mut field, quoted));
            quoted = false;
        } else if c == '\r' || c == '\n' {
            if c == '\r' && chars.peek() == Some(&'\n') {
                chars.next();
            }
            fields.push(finish(&mut field, quoted));
            quoted = false;
            if !(fields.len() == 1 && fields[0].is_empty()) {
                rows.push(Record { fields: std::mem::take(&mut fields), line: start_line });
            }
            fields.clear();
            line += 1;
            start_line = line;
        } else {
            field.push(c);
        }
    }
    if !field.is_empty() || quoted || !fields.is_empty() {
        fields.push(finish(&mut field, quoted));
        rows.push(Record { fields, line: start_line });
    }
    Ok(rows)
}
