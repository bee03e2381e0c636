package sandbox

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The in-memory reference of scanText: read_file's semantics before it
// streamed (the whole file as one string, then sliced).

// refSliceLines returns lines start..end (1-based, inclusive; nil end =
// to the last line) joined by "\n", without a trailing newline.
func refSliceLines(content string, start int, end *int) string {
	lines := strings.SplitAfter(content, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	last := len(lines)
	if end != nil && *end < last {
		last = *end
	}
	if start > last {
		return ""
	}
	sel := lines[start-1 : last]
	out := make([]string, len(sel))
	for i, l := range sel {
		out[i] = strings.TrimRight(l, "\n")
	}
	return strings.Join(out, "\n")
}

// refCountLines counts lines as read_file numbers them.
func refCountLines(content string) int {
	if content == "" {
		return 0
	}
	n := strings.Count(content, "\n")
	if !strings.HasSuffix(content, "\n") {
		n++
	}
	return n
}

func refScan(data []byte, o scanOptions) textScan {
	if isBinary(data) {
		return textScan{binary: true}
	}
	content := normalizeNewlines(string(data))
	res := textScan{sum: contentHash(data), lines: refCountLines(content)}
	if !o.collect {
		return res
	}
	if o.mask != nil {
		content = o.mask(content)
	}
	if o.ranged {
		var end *int
		if o.end > 0 {
			end = &o.end
		}
		content = refSliceLines(content, o.start, end)
	}
	res.total = utf8.RuneCountInString(content)
	res.head = content
	if o.keep > 0 {
		res.head = runePrefix(content, o.keep)
	}
	return res
}

func testMask(s string) string { return strings.ReplaceAll(s, "/host/ws", "/mnt/user-data/workspace") }

// scanCases are texts with every newline convention, multi-byte
// characters, binary content and masked paths.
var scanCases = []string{
	"", "a", "\n", "\n\n\n", "one\r\ntwo\nthree\n", "one\rtwo\r\n\r\nthree", "x\r", "\r\n", "\r\r\n\n",
	"héllo wörld\n日本語の行\n🙂🙂🙂\n", "no newline at end", "tab\tsep\n  indented\n",
	"see /host/ws/a.txt\nand /host/ws\n", "bad \xff byte\n", "nul\x00here\n", "cut \xe6\x97",
	strings.Repeat("line of text\n", 500), strings.Repeat("é", 3000) + "\n" + strings.Repeat("z", 10),
}

func scanOptionCases() map[string]scanOptions {
	return map[string]scanOptions{
		"hash only":        {},
		"whole":            {collect: true},
		"whole capped":     {collect: true, keep: 7},
		"whole masked":     {collect: true, mask: testMask},
		"range 1-1":        {collect: true, ranged: true, start: 1, end: 1},
		"range 2-3":        {collect: true, ranged: true, start: 2, end: 3},
		"range from 2":     {collect: true, ranged: true, start: 2},
		"range past end":   {collect: true, ranged: true, start: 9},
		"range capped":     {collect: true, ranged: true, start: 1, end: 400, keep: 100},
		"range masked cap": {collect: true, ranged: true, start: 1, end: 2, keep: 12, mask: testMask},
	}
}

func TestScanText_matchesInMemoryReference(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole reads": func(r io.Reader) io.Reader { return r },
		"one byte":    iotest.OneByteReader,
		"half":        iotest.HalfReader,
	}
	for name, o := range scanOptionCases() {
		for rname, wrap := range readers {
			for i, text := range scanCases {
				got, err := scanText(wrap(strings.NewReader(text)), o)
				if err != nil {
					t.Fatal(err)
				}
				want := refScan([]byte(text), o)
				if got.binary {
					got = textScan{binary: true}
				}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(textScan{})); diff != "" {
					t.Errorf("%s, %s, case %d %q: (-want +got)\n%s", name, rname, i, text[:min(len(text), 40)], diff)
				}
			}
		}
	}
}

// A read error is returned, not taken for the end of the file.
func TestScanText_readErrorReturned(t *testing.T) {
	_, err := scanText(iotest.TimeoutReader(strings.NewReader(strings.Repeat("x", 10))), scanOptions{collect: true})
	if err == nil {
		t.Fatal("no error")
	}
}

func FuzzScanText(f *testing.F) {
	for _, s := range scanCases {
		f.Add([]byte(s), 1, 2, 5)
	}
	f.Fuzz(func(t *testing.T, data []byte, start, end, keep int) {
		start = 1 + int(uint(start)%20)
		end = int(uint(end) % 20)
		keep = int(uint(keep) % 50)
		for _, o := range []scanOptions{
			{collect: true, keep: keep},
			{collect: true, keep: keep, ranged: true, start: start, end: end},
			{collect: true, keep: keep, mask: testMask},
			{},
		} {
			got, err := scanText(iotest.HalfReader(bytes.NewReader(data)), o)
			if err != nil {
				t.Fatal(err)
			}
			want := refScan(data, o)
			if got.binary {
				got = textScan{binary: true}
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(textScan{})); diff != "" {
				t.Fatalf("%+v on %q: (-want +got)\n%s", o, data, diff)
			}
		}
	})
}

func TestCountChars(t *testing.T) {
	for _, s := range append(scanCases, "日本語の行🙂é", strings.Repeat("日本", 100)+"x", "\u00ff\u0100\u07ff\u0800\uffff\U00010000\U0010ffff") {
		if !utf8.ValidString(s) {
			continue
		}
		for i := 0; i <= min(len(s), 9); i++ {
			if got, want := countChars([]byte(s[i:])), utf8.RuneCountInString(s[i:]); got != want && utf8.ValidString(s[i:]) {
				t.Errorf("countChars(%q) = %d, want %d", s[i:], got, want)
			}
		}
	}
}

// A masked line longer than maskLineMax is masked piece by piece, with
// every character kept and counted.
func TestScanText_longMaskedLine(t *testing.T) {
	unit := strings.Repeat("é", 1000) + " /host/ws/a " // 2,012 bytes, never across a piece boundary below
	line := strings.Repeat(unit, 3*maskLineMax/len(unit))
	text := line + "\nnext /host/ws\n"
	got, err := scanText(strings.NewReader(text), scanOptions{collect: true, mask: testMask})
	if err != nil {
		t.Fatal(err)
	}
	want := testMask(text)
	if got.head != want || got.total != utf8.RuneCountInString(want) || got.lines != 2 {
		t.Errorf("head equal %v, total %d (want %d), lines %d", got.head == want, got.total, utf8.RuneCountInString(want), got.lines)
	}
}
