package gemini

// The JSON shapes of the one Gemini API method Antler calls,
// models.streamGenerateContent (and models.get for Ping), in the REST
// API's camelCase. Only the fields Antler sends or reads are declared;
// the server ignores nothing Antler needs and Antler ignores the rest.
// Field names follow the API reference of v1beta
// (https://ai.google.dev/api/generate-content).

// generateRequest is the body of streamGenerateContent.
type generateRequest struct {
	Contents          []*content `json:"contents"`
	SystemInstruction *content   `json:"systemInstruction,omitempty"`
	Tools             []tool     `json:"tools,omitempty"`
	// GenerationConfig is always sent, as {} when nothing is set.
	GenerationConfig generationConfig `json:"generationConfig"`
}

// Roles of a content.
const (
	roleUser  = "user"
	roleModel = "model"
)

type content struct {
	Role  string  `json:"role,omitempty"`
	Parts []*part `json:"parts"`
}

// part is one piece of a content: text (a thought summary when Thought
// is set), inline bytes, a function call or a function response. The
// thought signature travels as base64, which encoding/json gives []byte.
type part struct {
	Text             string      `json:"text,omitempty"`
	Thought          bool        `json:"thought,omitempty"`
	InlineData       *blob       `json:"inlineData,omitempty"`
	FunctionCall     *fnCall     `json:"functionCall,omitempty"`
	FunctionResponse *fnResponse `json:"functionResponse,omitempty"`
	ThoughtSignature []byte      `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

type fnCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

type fnResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name,omitempty"`
	Response map[string]any `json:"response,omitempty"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitempty"`
	ParametersJSONSchema map[string]any `json:"parametersJsonSchema,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"topP,omitempty"`
	TopK            *float64        `json:"topK,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// generateResponse is one streamed chunk. Error is set when the server
// ends a stream with an error instead of a chunk.
type generateResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

type usageMetadata struct {
	PromptTokenCount     int64 `json:"promptTokenCount"`
	CandidatesTokenCount int64 `json:"candidatesTokenCount"`
	TotalTokenCount      int64 `json:"totalTokenCount"`
	ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
}

// apiError is the API's error object, the "error" member of an error
// answer's body ({"error":{"code":400,"message":"...","status":"..."}}).
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

func (e *apiError) Error() string {
	if e.Status != "" {
		return e.Status + ": " + e.Message
	}
	return e.Message
}
