"""Generate (or check) tasks.jsonl of the Rust demo task set: pipelines/tasksets/langtasks.py."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from langtasks import Bug, Edit, TaskSet, main  # noqa: E402

BUGS = [
    Bug("crlf-line-numbers", "off-by-one", """
Record line numbers are wrong for files with CRLF line ends

`Reader::new("a\\nb\\r\\nc\\n").records()` gives the records lines 1, 2 and 4 instead of 1, 2
and 3: every `\\r\\n` is counted as two line ends. Error messages then point at the wrong line
of Windows-made files.
""", [Edit("src/reader.rs", """            if c == '\\r' && chars.peek() == Some(&'\\n') {
                chars.next();
            }
""", "")]),
    Bug("doubled-quote", "parsing", '''
A doubled quote inside a quoted field is rejected

RFC 4180 §2.7: a quote inside a quoted field is written as two quotes. Reading
`"say ""hi""",x` fails with `TextAfterQuote { line: 1 }` instead of giving `say "hi"`, so files
written by `Writer` itself do not read back.
''', [Edit("src/reader.rs", """                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
""", "")]),
    Bug("edge-spaces-unquoted", "missing-case", """
`write_record` does not quote fields with leading or trailing spaces

`write_record(&[" a", "b "], ',')` gives ` a,b \\r\\n`. A reader that trims unquoted fields
(ours with `trim(true)`, spreadsheets) loses the spaces; they must be quoted to survive.
""", [Edit("src/writer.rs", """            || field.contains('\\r')
            || field.starts_with(' ')
            || field.ends_with(' ');""", """            || field.contains('\\r');""")]),
    Bug("unterminated-quote-line", "wrong-value", """
Unterminated quote error names the last line instead of the one where the quote opened

For `a,b\\n1,"open\\n2,3\\n` the error is `UnterminatedQuote { line: 4 }`, the end of the input.
The quote was opened on line 2, which is where the user has to look.
""", [Edit("src/reader.rs", "None => return Err(Error::UnterminatedQuote { line: start_line }),",
           "None => return Err(Error::UnterminatedQuote { line }),")]),
    Bug("quoted-newline-line-count", "off-by-one", """
Line numbers drift after a quoted field with a newline in it

In `id,note\\n1,"two\\nlines"\\n2,x\\n` the record `2,x` is on line 4 of the file, but
`records()` says line 3: the newline inside the quoted field is not counted.
""", [Edit("src/reader.rs", """                    Some(ch) => {
                        if ch == '\\n' {
                            line += 1;
                        }
                        field.push(ch);
                    }""", """                    Some(ch) => field.push(ch),""")]),
]

TASKSET = TaskSet(
    folder=HERE,
    repo="csvlite",
    language="rust",
    tests={"framework": "command", "command": "cargo test --offline --no-fail-fast", "results": "cargo", "report": ""},
    image="factory/demo-rust.csvlite:v1",
    bugs=BUGS,
)

if __name__ == "__main__":
    main(TASKSET)
