package agent

import "github.com/antlerhq/antler/tool"

// NewCountingDanglingToolCalls returns DanglingToolCalls and a function
// that reports how many messages its well-formedness checks scanned.
func NewCountingDanglingToolCalls() (tool.ModelMiddleware, func() int) {
	p := &wellFormedPrefix{}
	return danglingToolCalls(p), func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.scanned
	}
}
