package calc;

/** One token of an expression; {@code pos} is its offset in the source, for error messages. */
public record Token(Kind kind, String text, double number, int pos) {
    public enum Kind { NUMBER, IDENT, OP, LPAREN, RPAREN, COMMA, END }

    static Token of(Kind kind, String text, int pos) {
        return new Token(kind, text, 0, pos);
    }

    boolean is(Kind k, String t) {
        return kind == k && text.equals(t);
    }
}
