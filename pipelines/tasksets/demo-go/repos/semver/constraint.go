package semver

import (
	"fmt"
	"sort"
	"strings"
)

type comparator struct {
	op string // one of = < <= > >=
	v  Version
}

func (c comparator) check(v Version) bool {
	d := v.Compare(c.v)
	switch c.op {
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	}
	return d == 0
}

// Constraint is a union of ranges; each range is an intersection of comparators.
type Constraint struct {
	ranges [][]comparator
}

// ParseConstraint reads npm-style constraints: ">=1.2.0 <2.0.0", "^1.2.3", "~1.2", "1.x",
// "1.2.3 - 1.4", joined by "||".
func ParseConstraint(s string) (Constraint, error) {
	var c Constraint
	for _, part := range strings.Split(s, "||") {
		r, err := parseRange(strings.TrimSpace(part))
		if err != nil {
			return Constraint{}, fmt.Errorf("constraint %q: %w", s, err)
		}
		c.ranges = append(c.ranges, r)
	}
	return c, nil
}

func parseRange(s string) ([]comparator, error) {
	if s == "" || s == "*" {
		return []comparator{{">=", Version{}}}, nil
	}
	if lo, hi, ok := strings.Cut(s, " - "); ok {
		return hyphen(strings.TrimSpace(lo), strings.TrimSpace(hi))
	}
	var out []comparator
	for _, f := range strings.Fields(s) {
		cs, err := term(f)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// partial is a version with missing parts ("1", "1.2", "1.x").
type partial struct {
	parts []uint64 // the parts given, 0 to 3 of them
	pre   []string
}

func parsePartial(s string) (partial, error) {
	var p partial
	s = strings.TrimPrefix(s, "v")
	if s == "" || s == "*" || s == "x" || s == "X" {
		return p, nil
	}
	if strings.ContainsAny(s, "-+") {
		v, err := Parse(s)
		if err != nil {
			return p, err
		}
		return partial{parts: []uint64{v.Major, v.Minor, v.Patch}, pre: v.Pre}, nil
	}
	for i, f := range strings.Split(s, ".") {
		if i == 3 {
			return p, fmt.Errorf("%w %q: too many parts", ErrInvalid, s)
		}
		if f == "x" || f == "X" || f == "*" {
			break
		}
		n, err := number(f)
		if err != nil {
			return p, fmt.Errorf("%w %q: %v", ErrInvalid, s, err)
		}
		p.parts = append(p.parts, n)
	}
	return p, nil
}

func (p partial) floor() Version {
	v := Version{Pre: p.pre}
	for i, n := range p.parts {
		switch i {
		case 0:
			v.Major = n
		case 1:
			v.Minor = n
		case 2:
			v.Patch = n
		}
	}
	return v
}

// ceiling is the first version above every version the partial matches: 1.2 -> 1.3.0.
func (p partial) ceiling() Version {
	switch len(p.parts) {
	case 1:
		return Version{Major: p.parts[0] + 1}
	case 2:
		return Version{Major: p.parts[0], Minor: p.parts[1] + 1}
	}
	return Version{}
}

func term(f string) ([]comparator, error) {
	op := ""
	for _, o := range []string{">=", "<=", ">", "<", "=", "^", "~"} {
		if strings.HasPrefix(f, o) {
			op, f = o, f[len(o):]
			break
		}
	}
	p, err := parsePartial(f)
	if err != nil {
		return nil, err
	}
	full := len(p.parts) == 3
	switch op {
	case "^":
		return caret(p), nil
	case "~":
		if len(p.parts) == 0 {
			return []comparator{{">=", Version{}}}, nil
		}
		if len(p.parts) == 1 {
			return []comparator{{">=", p.floor()}, {"<", p.ceiling()}}, nil
		}
		return []comparator{{">=", p.floor()}, {"<", Version{Major: p.parts[0], Minor: p.parts[1] + 1}}}, nil
	case ">":
		if full {
			return []comparator{{">", p.floor()}}, nil
		}
		return []comparator{{">=", p.ceiling()}}, nil
	case "<=":
		if full {
			return []comparator{{"<=", p.floor()}}, nil
		}
		return []comparator{{"<", p.ceiling()}}, nil
	case ">=", "<":
		return []comparator{{op, p.floor()}}, nil
	}
	if full {
		return []comparator{{"=", p.floor()}}, nil
	}
	if len(p.parts) == 0 {
		return []comparator{{">=", Version{}}}, nil
	}
	return []comparator{{">=", p.floor()}, {"<", p.ceiling()}}, nil
}

// caret allows changes that do not modify the left-most non-zero part.
func caret(p partial) []comparator {
	if len(p.parts) == 0 {
		return []comparator{{">=", Version{}}}
	}
	lo := p.floor()
	var hi Version
	switch {
	case lo.Major > 0 || len(p.parts) == 1:
		hi = Version{Major: lo.Major + 1}
	case lo.Minor > 0 || len(p.parts) == 2:
		hi = Version{Minor: lo.Minor + 1}
	default:
		hi = Version{Patch: lo.Patch + 1}
	}
	return []comparator{{">=", lo}, {"<", hi}}
}

func hyphen(lo, hi string) ([]comparator, error) {
	a, err := parsePartial(lo)
	if err != nil {
		return nil, err
	}
	b, err := parsePartial(hi)
	if err != nil {
		return nil, err
	}
	if len(b.parts) == 3 || len(b.parts) == 0 {
		if len(b.parts) == 0 {
			return []comparator{{">=", a.floor()}}, nil
		}
		return []comparator{{">=", a.floor()}, {"<=", b.floor()}}, nil
	}
	return []comparator{{">=", a.floor()}, {"<", b.ceiling()}}, nil
}

// Check reports whether v satisfies the constraint. A pre-release satisfies a range only
// when one of its comparators names a pre-release of the same MAJOR.MINOR.PATCH.
func (c Constraint) Check(v Version) bool {
	for _, r := range c.ranges {
		if all(r, v) && preAllowed(r, v) {
			return true
		}
	}
	return false
}

func all(r []comparator, v Version) bool {
	for _, c := range r {
		if !c.check(v) {
			return false
		}
	}
	return true
}

func preAllowed(r []comparator, v Version) bool {
	if len(v.Pre) == 0 {
		return true
	}
	for _, c := range r {
		if len(c.v.Pre) > 0 && c.v.Major == v.Major && c.v.Minor == v.Minor && c.v.Patch == v.Patch {
			return true
		}
	}
	return false
}

// Max returns the highest version that satisfies the constraint, and false when none does.
func (c Constraint) Max(vs []Version) (Version, bool) {
	sorted := append([]Version(nil), vs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[j].Less(sorted[i]) })
	for _, v := range sorted {
		if c.Check(v) {
			return v, true
		}
	}
	return Version{}, false
}
