package calc;

import java.util.Arrays;

/** The built-in functions, checked for their number of arguments. */
final class Functions {
    private Functions() {
    }

    static double call(Token name, double[] args) {
        switch (name.text()) {
            case "sqrt":
                arity(name, args, 1);
                if (args[0] < 0) {
                    throw new CalcException("sqrt of a negative number", name.pos());
                }
                return Math.sqrt(args[0]);
            case "abs":
                arity(name, args, 1);
                return Math.abs(args[0]);
            case "round":
                arity(name, args, 1);
                return Math.round(args[0]);
            case "min":
                atLeast(name, args, 1);
                return Arrays.stream(args).min().getAsDouble();
            case "max":
                atLeast(name, args, 1);
                return Arrays.stream(args).max().getAsDouble();
            case "avg":
                atLeast(name, args, 1);
                return Arrays.stream(args).sum() / args.length;
            default:
                throw new CalcException("unknown function '" + name.text() + "'", name.pos());
        }
    }

    private static void arity(Token name, double[] args, int n) {
        if (args.length != n) {
            throw new CalcException(name.text() + " takes " + n + " argument(s), got " + args.length, name.pos());
        }
    }

    private static void atLeast(Token name, double[] args, int n) {
        if (args.length < n) {
            throw new CalcException(name.text() + " takes at least " + n + " argument(s)", name.pos());
        }
    }
}
