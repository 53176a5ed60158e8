"""Generate (or check) tasks.jsonl of the JavaScript demo task set: pipelines/tasksets/langtasks.py."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from langtasks import Bug, Edit, TaskSet, main  # noqa: E402

BUGS = [
    Bug("plus-as-space", "missing-case", """
`parse` keeps `+` instead of turning it into a space

Browsers submit forms as `application/x-www-form-urlencoded`, where a space is `+`.
`qs.parse('q=hello+world')` gives `{ q: 'hello+world' }`; it should be `{ q: 'hello world' }`
(a literal plus arrives as `%2B`).
""", [Edit("lib/encode.js", "  const spaced = text.replace(/\\+/g, ' ');\n", "  const spaced = text;\n")]),
    Bug("fragment-in-query", "parsing", """
`parseUrl` reads the fragment into the last query value

`qs.parseUrl('https://x.org/p?a=1&b=2#top').query` is `{ a: '1', b: '2#top' }`. The fragment
is not part of the query string (RFC 3986 §3.5); `b` should be `'2'`, and `fragment` is already
returned on its own.
""", [Edit("lib/index.js", "    query: q === -1 ? {} : finish(parse(withoutHash.slice(q + 1), opts)),",
           "    query: q === -1 ? {} : finish(parse(url.slice(q + 1), opts)),")]),
    Bug("equals-in-value", "parsing", """
Values containing `=` are cut off

A base64 token in a query string loses its padding: `qs.parse('token=abc==')` returns
`{ token: 'abc' }`. Only the first `=` of a pair separates the key from the value.
""", [Edit("lib/parse.js", "    const rawValue = eq === -1 ? null : pair.slice(eq + 1);",
           "    const rawValue = eq === -1 ? null : pair.split('=')[1];")]),
    Bug("array-limit-off-by-one", "off-by-one", """
`arrayLimit` lets one item too many through

With `{ arrayLimit: 2 }`, `qs.parse('a[]=1&a[]=2&a[]=3', { arrayLimit: 2 })` returns three
items. The README says lists are capped at `arrayLimit` items.
""", [Edit("lib/parse.js", "if (node[key].length < options.arrayLimit)", "if (node[key].length <= options.arrayLimit)")]),
    Bug("sort-function-ignored", "missing-case", """
`stringify` ignores a compare function given as `sort`

`qs.stringify({ b: 2, c: 3, a: 1 }, { sort: (x, y) => y.localeCompare(x) })` returns
`a=1&b=2&c=3`: the keys are sorted, but alphabetically, not with the function passed in.
""", [Edit("lib/stringify.js",
           "keys = keys.slice().sort(typeof options.sort === 'function' ? options.sort : undefined);",
           "keys = keys.slice().sort();")]),
]

TASKSET = TaskSet(
    folder=HERE,
    repo="qstring",
    language="javascript",
    tests={"framework": "command",
           "command": "mocha --reporter json --reporter-option output=$REPORT_DIR/mocha-report.json test/",
           "results": "mocha-json", "report": "mocha-report.json"},
    image="factory/demo-js.qstring:v1",
    bugs=BUGS,
)

if __name__ == "__main__":
    main(TASKSET)
