package gemini

import "context"

// Ping checks that the key is accepted and the model exists (a model
// lookup) without spending tokens. `antler doctor` uses it.
func (m *Model) Ping(ctx context.Context) error {
	if m.keyErr != nil {
		return m.keyErr
	}
	var info struct {
		Name string `json:"name"`
	}
	if err := m.client.get(ctx, modelPath(m.opts.Model), maxPingBytes, &info); err != nil {
		return m.wrap(ctx, err)
	}
	return nil
}
