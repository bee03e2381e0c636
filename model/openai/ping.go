package openai

import "context"

// Ping checks that the endpoint answers a cheap authenticated request (a
// model listing) without spending tokens. `antler doctor` uses it.
func (m *Model) Ping(ctx context.Context) error {
	if m.keyErr != nil {
		return m.keyErr
	}
	if err := m.client.get(ctx, "/models", maxPingBytes); err != nil {
		return m.wrap(ctx, err)
	}
	return nil
}
