// Package model holds the vocabulary Antler uses to talk to chat models:
// messages, tool calls, requests, responses and the [ChatModel] interface
// that providers (model/openai, model/anthropic, model/modeltest)
// implement. It has no dependencies on the rest of Antler.
package model
