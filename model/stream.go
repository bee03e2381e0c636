package model

import "context"

// Stream is a provider's open response stream, such as the Anthropic
// SDK's ssestream.Stream or model/openai's own server-sent events reader.
type Stream[T any] interface {
	Next() bool
	Current() T
	Err() error
}

// Drain reads a provider stream to its end for a Generate implementation:
// add turns each SDK chunk into events (yielded as they come), response
// assembles the final answer, and wrap turns SDK errors into the
// provider's errors. It yields the final event itself and reports whether
// the consumer is still listening. Cancellation is yielded as the
// context's own error.
func Drain[T any](ctx context.Context, s Stream[T], add func(T) []Event, response func() (*Response, error),
	wrap func(error) error, yield func(Event, error) bool) (*Response, bool) {
	for s.Next() {
		for _, ev := range add(s.Current()) {
			if !yield(ev, nil) {
				return nil, false
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, yield(Event{}, wrap(err))
	}
	if err := ctx.Err(); err != nil {
		return nil, yield(Event{}, err)
	}
	resp, err := response()
	if err != nil {
		return nil, yield(Event{}, wrap(err))
	}
	return resp, yield(Event{Response: resp}, nil)
}
