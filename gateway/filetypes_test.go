package gateway

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// activeType matches the types a browser may run script in, or hand to a
// plugin or an interpreter: HTML, XHTML, every XML type (XSLT, SVG, RSS,
// MathML, XUL...), JavaScript, Flash, HTA, MHTML, HTML components,
// WebAssembly, Java applets.
var activeType = regexp.MustCompile(`html|xml|javascript|ecmascript|svg|flash|shockwave|hta\b|rfc822|multipart|x-component|wasm|java-|x-sh\b|x-csh|x-perl|x-httpd`)

// passiveType is what an inline answer may be.
var passiveType = regexp.MustCompile(`^(text/plain; charset=utf-8|text/css; charset=utf-8|application/pdf|image/(png|apng|jpeg|gif|webp|avif|bmp|x-icon)|audio/[a-z0-9.+-]+|video/[a-z0-9.+-]+)$`)

// TestFileType_inlineTypesArePassive: every inline type of the table is
// passive, whatever is added to it later.
func TestFileType_inlineTypesArePassive(t *testing.T) {
	for ext, ct := range inlineTypes {
		if !passiveType.MatchString(ct) || activeType.MatchString(ct) {
			t.Errorf(".%s is inline as %q, not a passive type", ext, ct)
		}
		if got, inline := fileType("x." + ext); got != ct || !inline {
			t.Errorf("fileType(x.%s) = %q %v", ext, got, inline)
		}
	}
}

// TestFileType_noActiveTypeOfTheMIMEDatabaseIsInline walks the system's
// MIME databases (/etc/mime.types, the freedesktop globs): no extension
// they type as active is served as that type or inline unless as text, in
// any case. It skips when the machine has neither database.
func TestFileType_noActiveTypeOfTheMIMEDatabaseIsInline(t *testing.T) {
	db := mimeDatabase(t)
	if len(db) == 0 {
		t.Skip("no MIME database on this machine (/etc/mime.types, /usr/share/mime/globs2)")
	}
	active := 0
	for ext, types := range db {
		for _, name := range []string{"x." + ext, "x." + strings.ToUpper(ext), "x." + ext + ".", "x." + ext + " ", "x.txt." + ext} {
			ct, inline := fileType(name)
			if activeType.MatchString(ct) && !(ct == svgType && !inline) {
				t.Errorf("fileType(%q) = %q: an active type (database: %v)", name, ct, types)
			}
			if inline && !passiveType.MatchString(ct) {
				t.Errorf("fileType(%q) = %q inline: not passive (database: %v)", name, ct, types)
			}
		}
		for _, typ := range types {
			if activeType.MatchString(typ) {
				active++
				break
			}
		}
	}
	t.Logf("%d extensions, %d of them typed active by the database", len(db), active)
	if active < 40 {
		t.Errorf("only %d active extensions found: the database was not read as expected", active)
	}
}

// mimeDatabase reads extension -> types from the MIME databases found.
func mimeDatabase(t *testing.T) map[string][]string {
	t.Helper()
	db := map[string][]string{}
	add := func(ext, typ string) {
		ext = strings.ToLower(ext)
		if ext != "" && !strings.ContainsAny(ext, "*?[]/") {
			db[ext] = append(db[ext], strings.ToLower(typ))
		}
	}
	read := func(path string, line func(string)) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				line(l)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	read("/etc/mime.types", func(l string) {
		f := strings.Fields(l)
		for _, ext := range f[1:] {
			add(ext, f[0])
		}
	})
	// globs2 lines: weight:type:glob[:flags].
	read("/usr/share/mime/globs2", func(l string) {
		parts := strings.Split(l, ":")
		if len(parts) >= 3 && strings.HasPrefix(parts[2], "*.") {
			add(strings.TrimPrefix(parts[2], "*."), parts[1])
		}
	})
	return db
}
