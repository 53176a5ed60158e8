package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TokenizerTest {
    private static String kinds(String source) {
        return Tokenizer.tokenize(source).stream().map(t -> t.kind().name()).collect(Collectors.joining(" "));
    }

    @Test
    void splitsOperatorsAndNumbers() {
        assertEquals("NUMBER OP NUMBER OP NUMBER END", kinds("1+22 * 3"));
    }

    @Test
    void readsDecimalsAndExponents() {
        List<Token> tokens = Tokenizer.tokenize("1.5 2e3 4E-2 .5");
        assertEquals(1.5, tokens.get(0).number());
        assertEquals(2000.0, tokens.get(1).number());
        assertEquals(0.04, tokens.get(2).number(), 1e-12);
        assertEquals(0.5, tokens.get(3).number());
    }

    @Test
    void numberFollowedByNameE() {
        assertEquals("NUMBER IDENT END", kinds("2e"));
    }

    @Test
    void readsNamesWithDigitsAndUnderscores() {
        List<Token> tokens = Tokenizer.tokenize("rate_2 x1");
        assertEquals("rate_2", tokens.get(0).text());
        assertEquals("x1", tokens.get(1).text());
    }

    @Test
    void recordsPositions() {
        List<Token> tokens = Tokenizer.tokenize("  ab + 7");
        assertEquals(2, tokens.get(0).pos());
        assertEquals(5, tokens.get(1).pos());
        assertEquals(7, tokens.get(2).pos());
        assertEquals(8, tokens.get(3).pos());
    }

    @Test
    void rejectsUnknownCharacters() {
        CalcException e = assertThrows(CalcException.class, () -> Tokenizer.tokenize("1 $ 2"));
        assertEquals(2, e.position());
    }

    @Test
    void rejectsTwoDecimalPoints() {
        assertThrows(CalcException.class, () -> Tokenizer.tokenize("1.2.3"));
    }
}
