package calc;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Evaluates expressions by recursive descent over the tokens:
 *
 * <pre>
 * expr   := term (('+' | '-') term)*
 * term   := unary (('*' | '/' | '%') unary)*
 * unary  := '-' unary | power
 * power  := atom ('^' unary)?          right-associative, binds tighter than unary minus
 * atom   := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'
 * </pre>
 */
public class Calculator {
    private final Map<String, Double> variables = new HashMap<>();
    private List<Token> tokens;
    private int at;

    public Calculator() {
        variables.put("pi", Math.PI);
        variables.put("e", Math.E);
    }

    public void set(String name, double value) {
        variables.put(name, value);
    }

    public double eval(String source) {
        tokens = Tokenizer.tokenize(source);
        at = 0;
        if (peek().kind() == Token.Kind.END) {
            throw new CalcException("empty expression", 0);
        }
        double value = expr();
        if (peek().kind() != Token.Kind.END) {
            throw new CalcException("unexpected '" + peek().text() + "'", peek().pos());
        }
        return value;
    }

    private Token peek() {
        return tokens.get(at);
    }

    private Token next() {
        return tokens.get(at++);
    }

    private boolean accept(Token.Kind kind, String text) {
        if (peek().is(kind, text)) {
            at++;
            return true;
        }
        return false;
    }

    private double expr() {
        double value = term();
        while (true) {
            if (accept(Token.Kind.OP, "+")) {
                value += term();
            } else if (accept(Token.Kind.OP, "-")) {
                value -= term();
            } else {
                return value;
            }
        }
    }

    private double term() {
        double value = unary();
        while (true) {
            Token op = peek();
            if (accept(Token.Kind.OP, "*")) {
                value *= unary();
            } else if (accept(Token.Kind.OP, "/")) {
                double d = unary();
                if (d == 0) {
                    throw new CalcException("division by zero", op.pos());
                }
                value /= d;
            } else if (accept(Token.Kind.OP, "%")) {
                double d = unary();
                if (d == 0) {
                    throw new CalcException("division by zero", op.pos());
                }
                value %= d;
            } else {
                return value;
            }
        }
    }

    private double unary() {
        if (accept(Token.Kind.OP, "-")) {
            return -unary();
        }
        if (accept(Token.Kind.OP, "+")) {
            return unary();
        }
        return power();
    }

    private double power() {
        double base = atom();
        if (accept(Token.Kind.OP, "^")) {
            return Math.pow(base, unary());
        }
        return base;
    }

    private double atom() {
        Token t = next();
        switch (t.kind()) {
            case NUMBER:
                return t.number();
            case LPAREN: {
                double value = expr();
                expect(Token.Kind.RPAREN, ")");
                return value;
            }
            case IDENT:
                if (peek().kind() == Token.Kind.LPAREN) {
                    next();
                    return Functions.call(t, arguments());
                }
                Double v = variables.get(t.text());
                if (v == null) {
                    throw new CalcException("unknown variable '" + t.text() + "'", t.pos());
                }
                return v;
            case END:
                throw new CalcException("unexpected end of expression", t.pos());
            default:
                throw new CalcException("unexpected '" + t.text() + "'", t.pos());
        }
    }

    private double[] arguments() {
        List<Double> args = new java.util.ArrayList<>();
        if (!accept(Token.Kind.RPAREN, ")")) {
            do {
                args.add(expr());
            } while (accept(Token.Kind.COMMA, ","));
            expect(Token.Kind.RPAREN, ")");
        }
        return args.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private void expect(Token.Kind kind, String text) {
        Token t = next();
        if (!t.is(kind, text)) {
            throw new CalcException("expected '" + text + "' but found '" + t.text() + "'", t.pos());
        }
    }
}
