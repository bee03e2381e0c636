package searcheval

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/antlerhq/antler/tool"
)

// DistinctTools returns a synthetic catalogue of n MCP tools, 100 to a
// server, whose words are pseudo-words of three syllables ("kabedi",
// "kabedo", ...): each tool's name has two words no other tool uses, and
// its description (24 words) and four parameters (a name word and a
// six-word description each) draw words from a vocabulary of vocabulary
// words, at random. vocabulary ≤ 0 gives every word of every tool its own
// word, so that no two tools share one: the worst case for an index
// build, which does the first-time work of a word (analysis, stemming,
// interning, a slot in tables that outgrow the processor's caches) once
// per distinct word. Catalogues replicated from one real catalogue repeat
// their words instead. The result is the same on every call.
func DistinctTools(n, vocabulary int) []*tool.Tool {
	fresh := 0
	freshWord := func() string { fresh++; return pseudoWord(fresh) }
	r := rand.New(rand.NewPCG(uint64(n), uint64(vocabulary)))
	next := freshWord
	if vocabulary > 0 {
		fresh = vocabulary // names take words after the vocabulary's
		next = func() string { return pseudoWord(1 + r.IntN(vocabulary)) }
	}
	words := func(k int) string {
		parts := make([]string, k)
		for i := range parts {
			parts[i] = next()
		}
		return strings.Join(parts, " ")
	}
	tools := make([]*tool.Tool, n)
	for i := range tools {
		server := fmt.Sprintf("server%03d", i/100)
		name := server + "_" + freshWord() + "_" + freshWord()
		d := words(24)
		desc := strings.ToUpper(d[:1]) + d[1:] + "."
		props := make(map[string]any, 4)
		var required []string
		for range 4 {
			p := next()
			props[p] = map[string]string{"type": "string", "description": words(6)}
			required = append(required, p)
		}
		schema, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
		if err != nil {
			panic(err) // maps of strings always marshal
		}
		tools[i] = &tool.Tool{Name: name, Description: desc, InputSchema: schema,
			Meta: map[string]string{"mcp_server": server}}
	}
	return tools
}

// pseudoWord is the i-th word of three or more syllables, each a
// consonant and a vowel: distinct i give distinct words.
func pseudoWord(i int) string {
	const consonants, vowels = "bcdfghjklmnprstvwxyz", "aeiou"
	var b strings.Builder
	for s := 0; s < 3 || i > 0; s++ {
		d := i % 100
		i /= 100
		b.WriteByte(consonants[d/5])
		b.WriteByte(vowels[d%5])
	}
	return b.String()
}
