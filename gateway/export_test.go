package gateway

// The message conversions the tests check directly.
var (
	MessageDict  = messageDict
	ParseMessage = parseMessage
)
