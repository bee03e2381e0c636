// Package search is the search engine behind tool_search: it ranks a
// catalogue of tools against a query in plain words or a regular
// expression. Package deferred builds one [Index] per catalogue ([Build])
// and answers tool_search's ranked forms with [Index.Search] and
// [Index.Rerank]; the query syntax ("select:", "+keyword"), promotion and
// everything else about deferral stay there.
//
// Ranking is BM25F over six fields of a tool: its name, server,
// description, the lead sentence of the description (counted again, so
// that long manual-like descriptions do not bury a tool), and its
// parameter names and descriptions (read from the JSON Schema in place).
// Text is cut into runs of letters and digits, split at identifier
// boundaries (camelCase, snake_case, kebab-case); Chinese, Japanese and
// Korean text becomes overlapping character bigrams. Words lose stop
// words and single characters and are reduced to their Snowball English
// (Porter2) stems. Chinese text is also read as the English glosses of
// its CC-CEDICT words (cedict.txt, words cut longest first), so English
// queries find Chinese descriptions and the other way round. Compound
// identifiers of names and server names (datagov) also count their
// parts when the catalogue uses those parts elsewhere and not the
// compound in prose.
//
// Each query word forms a group: its own term at full weight, and at
// lower weight the other words of its groups in the hand-written lexicon
// (lexicon.txt), its WordNet derivationally related forms
// (derivations.txt: conversion → convert) and its truncation matches
// (index terms of at least four letters that extend it, or that it
// extends, by up to four letters). A document scores the best member of each group, never
// the sum of a word's forms. Scores are then boosted for a name the
// query covers, a full name or a server name the query contains, and two
// consecutive query words that are consecutive words of a name; a query
// mentioning a file path also asks for "file".
//
// Word vectors then reorder the documents a query matches by meaning:
// each document's vector is the IDF-weighted sum of its terms' vectors,
// the query's likewise, and their cosine similarity (above a floor) adds
// to the BM25F score. The vectors (vectors.bin, 96 signed bytes a term)
// are learnt by deferred/internal/genvectors from Debian's package
// descriptions and WordNet's glosses, never from tool catalogues or
// queries, and reproduced bit for bit by scripts/genvectors
// (docs/search-vectors.md). They never add a document that shares no
// word with the query.
//
// A query that is a valid regular expression (else a literal) matching
// some documents' "name description", case-insensitively, returns those
// first, name matches before description matches, as DeerFlow's
// single-regex search did; an index of the letter/digit runs of those
// texts rules out most documents before any regex runs.
//
// The four data files are embedded. The lexicon's synonym table is built
// once per process at the first build, and derivations.txt,
// cedict.txt and vectors.bin are indexed beside it (about 3 ms, once), so no query pays
// for them: a lazily loaded table made the first query of a process, or
// its first Chinese one, a 1–3 ms stall against a median of tens of
// microseconds. The first two are sorted text files binary-searched in place,
// regenerated with go generate by the commands in
// deferred/internal/genderiv and deferred/internal/gencedict. Last, Build
// runs one query on the finished index (warmQuery, through every path a
// query takes), so the first query a caller sends finds the scratch
// arrays allocated and the search code and data already touched: without
// it the first query cost three to five times a later one.
//
// The tuned constants (field weights and b, k1, boosts, the weights of a
// word's alternatives, truncation bounds), each lexicon group and RM3
// pseudo-relevance feedback (off) can be switched through [Options] and
// [BuildWith], for the offline cross-validation by server of package
// searcheval; [Build] is BuildWith with the zero Options, the shipped
// ranker.
//
// Building splits the catalogue between two goroutines (see
// buildIndexSplit); the index is the same, term and document ids
// included, however it is split.
package search
