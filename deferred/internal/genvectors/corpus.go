package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A corpus is the training text as units: sentences or paragraphs, each
// a sequence of index terms. Co-occurrence windows never cross a unit.
type corpus struct {
	units [][]string
	seen  map[string]bool // unit texts already taken (Debian repeats paragraphs)
}

func newCorpus() *corpus { return &corpus{seen: make(map[string]bool)} }

// add analyses text into a unit, unless the same text was added before.
func (c *corpus) add(an analyzer, text string) {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" || c.seen[text] {
		return
	}
	c.seen[text] = true
	if terms := an.Append(nil, text); len(terms) > 0 {
		c.units = append(c.units, terms)
	}
}

// analyzer is search.Analyzer's method the corpus needs.
type analyzer interface {
	Append(dst []string, text string) []string
}

// readDescriptions adds the package descriptions of a Debian
// Translation-en file (deb822 paragraphs with a Description-en field: a
// synopsis line, then an extended description whose lines start with a
// space and whose paragraphs are separated by " ."). The synopsis and
// each paragraph of the extended description are units of their own.
func (c *corpus) readDescriptions(an analyzer, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	var para strings.Builder
	inDesc := false
	flush := func() {
		c.add(an, para.String())
		para.Reset()
	}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "Description-en:"):
			flush()
			inDesc = true
			c.add(an, strings.TrimPrefix(text, "Description-en:"))
		case inDesc && strings.HasPrefix(text, " "):
			if strings.TrimSpace(text) == "." {
				flush()
				continue
			}
			para.WriteString(text)
			para.WriteByte(' ')
		default:
			flush()
			inDesc = false
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("descriptions, line %d: %w", line+1, err)
	}
	return nil
}

// wordnetFiles are WordNet's data files, in the order they are read.
var wordnetFiles = []string{"data.noun", "data.verb", "data.adj", "data.adv"}

// readWordNet adds WordNet 3.0's synsets from the database directory
// dir: each synset is one unit, its words followed by its gloss, so that
// a word's vector learns from its definition.
func (c *corpus) readWordNet(an analyzer, dir string) error {
	for _, name := range wordnetFiles {
		if err := c.readWordNetFile(an, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func (c *corpus) readWordNetFile(an analyzer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "  ") { // the licence header
			continue
		}
		words, gloss, err := wordnetSynset(text)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		c.add(an, strings.Join(words, " ")+" "+gloss)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	return nil
}

// wordnetSynset reads a data-file line: "offset lexfile pos w_cnt (word
// lex_id)... p_cnt ... | gloss", w_cnt in hexadecimal; multi-word lemmas
// join their words with underscores.
func wordnetSynset(line string) (words []string, gloss string, err error) {
	head, gloss, ok := strings.Cut(line, " | ")
	if !ok {
		return nil, "", fmt.Errorf("no gloss")
	}
	f := strings.Fields(head)
	if len(f) < 4 {
		return nil, "", fmt.Errorf("short synset line")
	}
	var n int
	if _, err := fmt.Sscanf(f[3], "%x", &n); err != nil || n < 1 || len(f) < 4+2*n {
		return nil, "", fmt.Errorf("word count %q", f[3])
	}
	for i := range n {
		w := f[4+2*i]
		if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: long(a)
			w = w[:j]
		}
		words = append(words, strings.ReplaceAll(w, "_", " "))
	}
	return words, gloss, nil
}
