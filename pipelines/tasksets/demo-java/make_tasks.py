"""Generate (or check) tasks.jsonl of the Java demo task set: pipelines/tasksets/langtasks.py."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from langtasks import Bug, Edit, TaskSet, main  # noqa: E402

BUGS = [
    Bug("power-associativity", "logic", """
`2 ^ 3 ^ 2` gives 64 instead of 512, and `2 ^ -2` does not parse

Exponentiation should be right-associative, as the grammar in `Calculator`'s Javadoc says
(`2 ^ 3 ^ 2` is `2 ^ 9`). `new Calculator().eval("2 ^ 3 ^ 2")` returns 64.0, and
`eval("2 ^ -2")` throws `CalcException: unexpected '-'` instead of returning 0.25.
""", [Edit("src/main/java/calc/Calculator.java", """        double base = atom();
        if (accept(Token.Kind.OP, "^")) {
            return Math.pow(base, unary());
        }
        return base;""", """        double base = atom();
        while (accept(Token.Kind.OP, "^")) {
            base = Math.pow(base, atom());
        }
        return base;""")]),
    Bug("unknown-variable-position", "off-by-one", """
Error position for an unknown variable points past the name

`eval("1 + y")` throws `CalcException: unknown variable 'y' at position 5`, but `y` is at
position 4 (and `position()` says 5 too). Editors use the position to underline the name.
""", [Edit("src/main/java/calc/Calculator.java",
           """throw new CalcException("unknown variable '" + t.text() + "'", t.pos());""",
           """throw new CalcException("unknown variable '" + t.text() + "'", peek().pos());""")]),
    Bug("remainder-by-zero", "missing-case", """
`5 % 0` returns NaN instead of failing

`1 / 0` throws `CalcException: division by zero`, but `eval("5 % 0")` quietly returns NaN,
which then spreads through every expression that uses the result.
""", [Edit("src/main/java/calc/Calculator.java", """            } else if (accept(Token.Kind.OP, "%")) {
                double d = unary();
                if (d == 0) {
                    throw new CalcException("division by zero", op.pos());
                }
                value %= d;""", """            } else if (accept(Token.Kind.OP, "%")) {
                value %= unary();""")]),
    Bug("exponent-backtrack", "parsing", """
`2e` is rejected as a bad number

`Tokenizer.tokenize("2e")` throws `CalcException: bad number '2e'`. A number followed by the
name `e` with no exponent digits should be the number 2 and the name `e` (so `2e` can be
read as an implicit product later); `2e3` is still an exponent.
""", [Edit("src/main/java/calc/Tokenizer.java", """                    } else {
                        i = mark; // "2e" is the number 2 followed by the name e
                    }
""", """                    }
""")]),
    Bug("arity-too-many", "wrong-operator", """
`sqrt(1, 2)` silently ignores the second argument

Functions that take one argument accept any number of them: `eval("sqrt(9, 100)")` returns
3.0. It should throw `CalcException` saying `sqrt takes 1 argument(s), got 2`.
""", [Edit("src/main/java/calc/Functions.java", "        if (args.length != n) {", "        if (args.length < n) {")]),
]

TASKSET = TaskSet(
    folder=HERE,
    repo="calc",
    language="java",
    tests={"framework": "command", "command": "sh run-tests.sh", "results": "junit", "report": "TEST-junit-jupiter.xml"},
    image="factory/demo-java.calc:v1",
    bugs=BUGS,
)

if __name__ == "__main__":
    main(TASKSET)
