// Package semver parses and compares Semantic Versioning 2.0.0 versions.
package semver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("invalid version")

// Version is a parsed semantic version.
type Version struct {
	Major, Minor, Patch uint64
	Pre                 []string // dot-separated pre-release identifiers
	Build               []string // build metadata, ignored by comparisons
}

// Parse reads a version such as "1.2.3", "v1.2.3-beta.1" or "1.0.0+sha.5114f85".
func Parse(s string) (Version, error) {
	var v Version
	in := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if in == "" {
		return v, fmt.Errorf("%w: empty string", ErrInvalid)
	}
	if i := strings.IndexByte(in, '+'); i >= 0 {
		build := in[i+1:]
		in = in[:i]
		ids, err := identifiers(build, false)
		if err != nil {
			return v, fmt.Errorf("%w %q: build metadata: %v", ErrInvalid, s, err)
		}
		v.Build = ids
	}
	if i := strings.IndexByte(in, '-'); i >= 0 {
		pre := in[i+1:]
		in = in[:i]
		ids, err := identifiers(pre, true)
		if err != nil {
			return v, fmt.Errorf("%w %q: pre-release: %v", ErrInvalid, s, err)
		}
		v.Pre = ids
	}
	parts := strings.Split(in, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("%w %q: want MAJOR.MINOR.PATCH", ErrInvalid, s)
	}
	nums := make([]uint64, 3)
	for i, p := range parts {
		n, err := number(p)
		if err != nil {
			return v, fmt.Errorf("%w %q: %v", ErrInvalid, s, err)
		}
		nums[i] = n
	}
	v.Major, v.Minor, v.Patch = nums[0], nums[1], nums[2]
	return v, nil
}

// MustParse is Parse that panics on error, for constants in tests and tables.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

func number(p string) (uint64, error) {
	if p == "" {
		return 0, errors.New("empty number")
	}
	if len(p) > 1 && p[0] == '0' {
		return 0, fmt.Errorf("leading zero in %q", p)
	}
	n, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", p)
	}
	return n, nil
}

func identifiers(s string, pre bool) ([]string, error) {
	ids := strings.Split(s, ".")
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("empty identifier")
		}
		for _, r := range id {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, fmt.Errorf("bad character %q in %q", r, id)
			}
		}
		if pre && isNumeric(id) && len(id) > 1 && id[0] == '0' {
			return nil, fmt.Errorf("leading zero in %q", id)
		}
	}
	return ids, nil
}

func isNumeric(id string) bool {
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return id != ""
}

// String gives the canonical form, without a "v".
func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if len(v.Pre) > 0 {
		s += "-" + strings.Join(v.Pre, ".")
	}
	if len(v.Build) > 0 {
		s += "+" + strings.Join(v.Build, ".")
	}
	return s
}

// Compare returns -1, 0 or 1 by SemVer precedence; build metadata is ignored.
func (v Version) Compare(o Version) int {
	if c := cmp(v.Major, o.Major); c != 0 {
		return c
	}
	if c := cmp(v.Minor, o.Minor); c != 0 {
		return c
	}
	if c := cmp(v.Patch, o.Patch); c != 0 {
		return c
	}
	return comparePre(v.Pre, o.Pre)
}

// Less reports whether v has lower precedence than o.
func (v Version) Less(o Version) bool { return v.Compare(o) < 0 }

func cmp(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A release ranks above its pre-releases; identifiers compare numerically when both are
// numbers, numbers rank below words, and a longer list wins when one is a prefix of the other.
func comparePre(a, b []string) int {
	if len(a) == 0 || len(b) == 0 {
		switch {
		case len(a) == len(b):
			return 0
		case len(a) == 0:
			return 1
		}
		return -1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		xn, yn := isNumeric(x), isNumeric(y)
		switch {
		case xn && yn:
			xi, _ := strconv.ParseUint(x, 10, 64)
			yi, _ := strconv.ParseUint(y, 10, 64)
			return cmp(xi, yi)
		case xn:
			return -1
		case yn:
			return 1
		case x < y:
			return -1
		default:
			return 1
		}
	}
	return cmp(uint64(len(a)), uint64(len(b)))
}

// Bump returns the next version for a change of kind "major", "minor" or "patch".
// A pre-release is released by bumping the part it precedes: 1.3.0-rc.1 bumped "minor" is 1.3.0.
func (v Version) Bump(kind string) (Version, error) {
	pre := len(v.Pre) > 0
	n := Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
	switch kind {
	case "major":
		if !pre || v.Minor != 0 || v.Patch != 0 {
			n.Major, n.Minor, n.Patch = v.Major+1, 0, 0
		}
	case "minor":
		if !pre || v.Patch != 0 {
			n.Minor, n.Patch = v.Minor+1, 0
		}
	case "patch":
		if !pre {
			n.Patch = v.Patch + 1
		}
	default:
		return v, fmt.Errorf("unknown bump %q (want major, minor or patch)", kind)
	}
	return n, nil
}
