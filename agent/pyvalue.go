package agent

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file renders decoded JSON values the way DeerFlow's Python code
// does when it calls str() on them, and measures Python's json.dumps
// output, so that normalisation limits and fallback texts match DeerFlow
// byte for byte on ordinary input.

// decodeArgs decodes tool arguments keeping numbers as json.Number, so
// that 1 and 1.0 render as Python would render them.
func decodeArgs(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeJSONString is Python's json.loads on a string argument.
func decodeJSONString(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	return v, true
}

// pyStr is Python's str(v) for a decoded JSON value.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return pyNumber(x)
	case float64:
		return pyFloat(x)
	default:
		return pyRepr(v)
	}
}

func pyNumber(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return s // big integers print as written
	}
	f, err := n.Float64()
	if err != nil {
		return s
	}
	return pyFloat(f)
}

func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	abs := math.Abs(f)
	var s string
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		s = strconv.FormatFloat(f, 'e', -1, 64)
		// Python writes at least two exponent digits: 1e-07, 1e+20.
		if i := strings.IndexAny(s, "+-"); i > 0 && len(s)-i-1 < 2 {
			s = s[:i+1] + "0" + s[i+1:]
		}
		return s
	}
	s = strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyRepr approximates Python's repr of a decoded JSON container.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			return `"` + x + `"`
		}
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", `\'`) + "'"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // Go maps lose the source order
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return pyStr(v)
	}
}

// pyTruthy is Python's bool(v) for a decoded JSON value.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case bool:
		return x
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// pyDumpsLen is len(json.dumps(v, ensure_ascii=False).encode()) for the
// values a normalised form holds (strings, bools, lists, ordered maps).
func pyDumpsLen(v any) int {
	switch x := v.(type) {
	case string:
		n := 2
		for _, r := range x {
			switch {
			case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
				n += 2
			case r < 0x20:
				n += 6
			default:
				n += utf8.RuneLen(r)
			}
		}
		return n
	case bool:
		if x {
			return 4
		}
		return 5
	case nil:
		return 4
	case []any:
		n := 2
		for i, e := range x {
			if i > 0 {
				n += 2
			}
			n += pyDumpsLen(e)
		}
		return n
	case []map[string]any:
		n := 2
		for i, e := range x {
			if i > 0 {
				n += 2
			}
			n += pyDumpsLen(e)
		}
		return n
	case map[string]any:
		n, i := 2, 0
		for k, e := range x {
			if i > 0 {
				n += 2
			}
			n += pyDumpsLen(k) + 2 + pyDumpsLen(e)
			i++
		}
		return n
	}
	b, _ := json.Marshal(v)
	return len(b)
}
