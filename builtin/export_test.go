package builtin

// isImageContextMessage, for the external loop test.
var IsImageContextMessage = isImageContextMessage
