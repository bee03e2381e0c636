package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/internal/searcheval"
)

// crossValidate prints every method's figures in-fold and out of fold,
// then what the selection found for each tuned element.
func crossValidate(catalogFile, queryFile string, k, folds int, seed uint64, objective string, asJSON bool) error {
	if catalogFile == "" || queryFile == "" {
		return fmt.Errorf("-catalog and -queries are required")
	}
	entries, err := searcheval.ReadJSONL[searcheval.Entry](catalogFile)
	if err != nil {
		return err
	}
	all, err := searcheval.ReadJSONL[searcheval.Query](queryFile)
	if err != nil {
		return err
	}
	sp, err := searcheval.ServerFolds(entries, all, folds, seed)
	if err != nil {
		return err
	}
	tools, ids := searcheval.Tools(entries)
	c := &searcheval.CV{Tools: tools, IDs: ids, Folds: folds, K: k, Objective: objective}
	anyOf := false
	for i, q := range all {
		if sp.QueryFold[i] < 0 {
			continue
		}
		c.Queries = append(c.Queries, q)
		c.Fold = append(c.Fold, sp.QueryFold[i])
		anyOf = anyOf || q.GoldAnyOf != nil
	}
	switch {
	case c.Objective == "" && anyOf:
		c.Objective = "recall"
	case c.Objective == "":
		c.Objective = "hit"
	case c.Objective != "recall" && c.Objective != "hit":
		return fmt.Errorf("-objective %q: want recall or hit", objective)
	}
	if !asJSON {
		c.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	rep, err := c.Run()
	if err != nil {
		return err
	}
	rep.Methods = append(rep.Methods,
		c.Fixed("bm25", searcheval.NewBM25(tools).Search),
		c.Fixed("deerflow", searcheval.NewDeerFlow(tools).Search))
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(rep)
	}
	fmt.Printf("k=%d folds=%d (queries %v) seed=%d objective=%s\n", k, folds, rep.FoldSizes, seed, rep.Objective)
	fmt.Printf("%-16s %8s %8s %8s | %8s %8s %8s  %s\n", "method", "recall", "hit", "mrr", "oof rec", "oof hit", "oof mrr", "in-fold choices")
	for _, m := range rep.Methods {
		fmt.Printf("%-16s %8.3f %8.3f %8.3f | %8.3f %8.3f %8.3f  %s\n", m.Method,
			m.InFold.Recall(), m.InFold.Hit(), m.InFold.MRR(),
			m.OutOfFold.Recall(), m.OutOfFold.Hit(), m.OutOfFold.MRR(), searcheval.OptionsString(m.InFoldOptions))
	}
	fmt.Printf("\nelements (counts of the objective; off<0: the element helps; holds: helps >=2 folds, more than it hurts)\n")
	fmt.Printf("%-24s %7s %5s %6s %5s %7s %5s %5s %6s  %s\n", "element", "shipped", "off", "helped", "hurt", "in-fold", "gain", "+/-", "oof", "per fold")
	for _, e := range rep.Elements {
		name := e.Element
		if len(name) > 24 {
			name = name[:24]
		}
		holds := ""
		if e.Holds() {
			holds = " holds"
		}
		var pf []string
		for _, v := range e.PerFold {
			pf = append(pf, fmt.Sprintf("%g", v))
		}
		fmt.Printf("%-24s %7g %5d %6d %5d %7g %5d %2d/%-2d %6d  %s%s\n", name, e.Shipped, e.Off, e.FoldsHelped, e.FoldsHurt,
			e.InFold, e.InFoldGain, e.FoldsBetter, e.FoldsWorse, e.OutOfFoldGain, strings.Join(pf, " "), holds)
	}
	return nil
}

// parseOptions reads -params and -drop-lexicon.
func parseOptions(params, drop string) (deferred.SearchOptions, error) {
	var o deferred.SearchOptions
	for kv := range strings.SplitSeq(params, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil {
			return o, fmt.Errorf("-params: %q is not name=number", kv)
		}
		if o.Params == nil {
			o.Params = make(map[string]float64)
		}
		o.Params[name] = v
	}
	for g := range strings.SplitSeq(drop, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		n, err := strconv.Atoi(g)
		if err != nil {
			return o, fmt.Errorf("-drop-lexicon: %q is not a group number", g)
		}
		o.DropLexicon = append(o.DropLexicon, n)
	}
	return o, nil
}
