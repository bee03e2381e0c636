package subagent

// Names the external tests of the package use.
const (
	LimitNotice         = limitNotice
	BashDisabledMessage = bashDisabledMessage
)
