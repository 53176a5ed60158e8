package calc;

/** A malformed expression or an evaluation error; {@code position} is -1 when not known. */
public class CalcException extends RuntimeException {
    private final int position;

    public CalcException(String message, int position) {
        super(position >= 0 ? message + " at position " + position : message);
        this.position = position;
    }

    public int position() {
        return position;
    }
}
