package main

import (
	"bytes"
	"fmt"
	"math"
)

// encodeTable writes the table search.loadVectors reads: a header line
// "antler-word-vectors 1 <words> <dims> <settings>", then the words,
// sorted, one per line, then each word's vector in the same order as
// dims signed bytes. A vector is scaled so that its largest component
// is ±127 (cosine similarity does not depend on the scale).
func encodeTable(words []string, vecs []float64, o trainOptions) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "antler-word-vectors 1 %d %d min-count=%d max-words=%d window=%d oversample=%d power-iters=%d alpha=%g eig-power=%g seed=%d\n",
		len(words), o.dims, o.minCount, o.maxWords, o.window, o.oversample, o.powerIters, o.alpha, o.eigPower, o.seed)
	for _, w := range words {
		b.WriteString(w)
		b.WriteByte('\n')
	}
	for r := range words {
		row := vecs[r*o.dims : (r+1)*o.dims]
		var peak float64
		for _, x := range row {
			peak = max(peak, math.Abs(x))
		}
		for _, x := range row {
			var q int8
			if peak > 0 {
				q = int8(math.Round(x / peak * 127))
			}
			b.WriteByte(byte(q))
		}
	}
	return b.Bytes()
}
