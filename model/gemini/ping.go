package gemini

import "context"

// Ping checks that the key is accepted and the model exists (a model
// lookup) without spending tokens. `antler doctor` uses it.
func (m *Model) Ping(ctx context.Context) error {
	if m.keyErr != nil {
		return m.keyErr
	}
	if _, err := m.client.Models.Get(ctx, m.opts.Model, nil); err != nil {
		return m.wrap(ctx, err)
	}
	return nil
}
