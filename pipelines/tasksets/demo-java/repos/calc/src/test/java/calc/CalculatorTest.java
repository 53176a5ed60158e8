package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CalculatorTest {
    private final Calculator calc = new Calculator();

    private double eval(String s) {
        return calc.eval(s);
    }

    @Test
    void addsAndSubtracts() {
        assertEquals(6.0, eval("1 + 2 + 3"));
        assertEquals(-4.0, eval("1 - 2 - 3"));
    }

    @Test
    void multiplicationBindsTighter() {
        assertEquals(7.0, eval("1 + 2 * 3"));
        assertEquals(9.0, eval("(1 + 2) * 3"));
    }

    @Test
    void divisionIsLeftAssociative() {
        assertEquals(2.0, eval("16 / 4 / 2"));
    }

    @Test
    void remainder() {
        assertEquals(1.0, eval("10 % 3"));
    }

    @Test
    void powerIsRightAssociative() {
        assertEquals(512.0, eval("2 ^ 3 ^ 2"));
    }

    @Test
    void powerBindsTighterThanUnaryMinus() {
        assertEquals(-4.0, eval("-2 ^ 2"));
        assertEquals(4.0, eval("(-2) ^ 2"));
    }

    @Test
    void negativeExponent() {
        assertEquals(0.25, eval("2 ^ -2"));
    }

    @Test
    void unaryMinusAndPlus() {
        assertEquals(3.0, eval("--3"));
        assertEquals(-1.0, eval("2 * -0.5"));
        assertEquals(5.0, eval("+5"));
    }

    @Test
    void variables() {
        calc.set("x", 4);
        assertEquals(46.0, eval("2 * (x + 1) ^ 2 - sqrt(16)"));
    }

    @Test
    void constants() {
        assertEquals(Math.PI, eval("pi"));
        assertEquals(Math.E, eval("e"));
    }

    @Test
    void functions() {
        assertEquals(3.0, eval("sqrt(9)"));
        assertEquals(2.0, eval("abs(-2)"));
        assertEquals(3.0, eval("round(2.5)"));
        assertEquals(1.0, eval("min(3, 1, 2)"));
        assertEquals(3.0, eval("max(3, 1, 2)"));
        assertEquals(2.0, eval("avg(1, 2, 3)"));
    }

    @Test
    void nestedFunctionCalls() {
        assertEquals(5.0, eval("max(1, min(5, 9), sqrt(4))"));
    }

    @Test
    void wrongArgumentCount() {
        CalcException e = assertThrows(CalcException.class, () -> eval("sqrt(1, 2)"));
        assertTrue(e.getMessage().contains("takes 1 argument"), e.getMessage());
        assertThrows(CalcException.class, () -> eval("max()"));
    }

    @Test
    void divisionByZero() {
        CalcException e = assertThrows(CalcException.class, () -> eval("1 / (2 - 2)"));
        assertEquals(2, e.position());
        assertThrows(CalcException.class, () -> eval("5 % 0"));
    }

    @Test
    void unknownVariableNamesIt() {
        CalcException e = assertThrows(CalcException.class, () -> eval("1 + y"));
        assertTrue(e.getMessage().contains("'y'"), e.getMessage());
        assertEquals(4, e.position());
    }

    @Test
    void unknownFunction() {
        assertThrows(CalcException.class, () -> eval("cos(0)"));
    }

    @Test
    void unbalancedParentheses() {
        assertThrows(CalcException.class, () -> eval("(1 + 2"));
        assertThrows(CalcException.class, () -> eval("1 + 2)"));
    }

    @Test
    void trailingOperator() {
        CalcException e = assertThrows(CalcException.class, () -> eval("1 +"));
        assertTrue(e.getMessage().contains("end of expression"), e.getMessage());
    }

    @Test
    void emptyExpression() {
        assertThrows(CalcException.class, () -> eval("   "));
    }
}
