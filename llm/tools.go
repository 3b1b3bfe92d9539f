package llm

import (
	"encoding/json"
	"hash/maphash"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// toolCache keeps the encoded "tools" array of the tool sets a client
// sends. The schemas are most of a request's bytes and the same from one
// call to the next, and encoding json.RawMessage schemas means validating
// and compacting every byte of them again; a run with a dozen tools spent
// more time there than on the rest of its request.
type toolCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	sets map[uint64]json.RawMessage
}

// maxToolSets bounds the cache; past it the cache starts over (tool sets
// change rarely: a skill's allowed tools, an MCP server's list).
const maxToolSets = 64

// encode returns specs as the request's "tools" array.
func (tc *toolCache) encode(specs []ToolSpec) (json.RawMessage, error) {
	tc.mu.Lock()
	if tc.sets == nil {
		tc.seed, tc.sets = maphash.MakeSeed(), map[uint64]json.RawMessage{}
	}
	key := toolsKey(tc.seed, specs)
	b, ok := tc.sets[key]
	tc.mu.Unlock()
	if ok {
		return b, nil
	}
	tools := make([]openai.Tool, 0, len(specs))
	for _, t := range specs {
		fd := &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		if len(t.Parameters) == 0 {
			fd.Parameters = emptySchema
		}
		tools = append(tools, openai.Tool{Type: openai.ToolTypeFunction, Function: fd})
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, err
	}
	tc.mu.Lock()
	if len(tc.sets) >= maxToolSets {
		clear(tc.sets)
	}
	tc.sets[key] = b
	tc.mu.Unlock()
	return b, nil
}

// toolsKey hashes everything of specs that goes on the wire.
func toolsKey(seed maphash.Seed, specs []ToolSpec) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, t := range specs {
		h.WriteString(t.Name)
		h.WriteByte(0)
		h.WriteString(t.Description)
		h.WriteByte(0)
		h.Write(t.Parameters)
		h.WriteByte(0)
	}
	return h.Sum64()
}
