import sys


def main() -> None:
    op, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print({"add": a + b, "mul": a * b, "sub": a - b}[op])


if __name__ == "__main__":
    main()
