package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// Ping checks that the endpoint answers a cheap authenticated request (a
// model listing) without spending tokens. `antler doctor` uses it.
func (m *Model) Ping(ctx context.Context) error {
	if m.keyErr != nil {
		return m.keyErr
	}
	if _, err := m.models.List(ctx, sdk.ModelListParams{}); err != nil {
		return m.wrap(ctx, err)
	}
	return nil
}
