package calc;

import java.util.ArrayList;
import java.util.List;

/** Splits an expression into tokens: numbers (with decimals and exponents), names, operators. */
public final class Tokenizer {
    private static final String OPERATORS = "+-*/%^";

    private Tokenizer() {
    }

    public static List<Token> tokenize(String source) {
        List<Token> out = new ArrayList<>();
        int i = 0;
        int n = source.length();
        while (i < n) {
            char c = source.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (Character.isDigit(c) || c == '.') {
                int start = i;
                while (i < n && (Character.isDigit(source.charAt(i)) || source.charAt(i) == '.')) {
                    i++;
                }
                if (i < n && (source.charAt(i) == 'e' || source.charAt(i) == 'E')) {
                    int mark = i++;
                    if (i < n && (source.charAt(i) == '+' || source.charAt(i) == '-')) {
                        i++;
                    }
                    if (i < n && Character.isDigit(source.charAt(i))) {
                        while (i < n && Character.isDigit(source.charAt(i))) {
                            i++;
                        }
                    } else {
                        i = mark; // "2e" is the number 2 followed by the name e
                    }
                }
                String text = source.substring(start, i);
                try {
                    out.add(new Token(Token.Kind.NUMBER, text, Double.parseDouble(text), start));
                } catch (NumberFormatException e) {
                    throw new CalcException("bad number '" + text + "'", start);
                }
            } else if (Character.isLetter(c) || c == '_') {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(source.charAt(i)) || source.charAt(i) == '_')) {
                    i++;
                }
                out.add(Token.of(Token.Kind.IDENT, source.substring(start, i), start));
            } else if (OPERATORS.indexOf(c) >= 0) {
                out.add(Token.of(Token.Kind.OP, String.valueOf(c), i++));
            } else if (c == '(') {
                out.add(Token.of(Token.Kind.LPAREN, "(", i++));
            } else if (c == ')') {
                out.add(Token.of(Token.Kind.RPAREN, ")", i++));
            } else if (c == ',') {
                out.add(Token.of(Token.Kind.COMMA, ",", i++));
            } else {
                throw new CalcException("unexpected character '" + c + "'", i);
            }
        }
        out.add(Token.of(Token.Kind.END, "", n));
        return out;
    }
}
