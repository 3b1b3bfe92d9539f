package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// clarifyThenAnswer scripts a model that asks which city, then answers
// with what the person chose.
func clarifyThenAnswer(model *fakeopenai.Server) {
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if r.Last().Role == "user" && strings.Contains(r.Last().Content, "weather") {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ask_clarification",
				Arguments: `{"question":"Which city do you mean?","clarification_type":"ambiguous_requirement","options":["Oslo","Bergen"]}`}}}
		}
		return fakeopenai.Turn{Text: "You chose " + r.Last().Content + "; it is sunny there."}
	})
}

func TestConsoleClarificationRoundTrip(t *testing.T) {
	model := fakeopenai.New(t)
	clarifyThenAnswer(model)
	s := startChat(t, testConfig(t, model, t.TempDir()))
	s.say("what's the weather?")
	s.screen.waitFor(t, "❓ Which city do you mean?", 1)
	s.screen.waitFor(t, "2. Bergen", 1)
	s.say("2")
	s.screen.waitFor(t, "You chose 2; it is sunny there.", 1)
	last := model.Requests()[len(model.Requests())-1]
	if got := last.Roles(); got != "system,user,assistant,tool,assistant,user" {
		t.Errorf("the answer continued with %s", got)
	}
	if !strings.Contains(last.Messages[4].Content, "1. Oslo\n2. Bergen") {
		t.Errorf("the question in the history = %q", last.Messages[4].Content)
	}
	s.say("/status")
	s.screen.waitFor(t, "Tokens: ", 1)
	if out := s.screen.String(); !strings.Contains(out, "— what's the weather?") {
		t.Errorf("/status shows no title:\n%s", out)
	}
}

func TestTelegramClarificationInAGroup(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	run := startTelegram(t, tg, model, t.TempDir())
	group := faketelegram.Chat{ID: -100333, Type: "supergroup", Title: "Trips"}
	tg.PushMessage(faketelegram.Group(group, ann, "@deerflow_test_bot what's the weather?"))
	q := run.waitFinal(tg, group.ID, "Which city do you mean?")
	for _, want := range []string{"Oslo", "Bergen", "Reply with a number"} {
		if !strings.Contains(q.PlainText, want) {
			t.Errorf("question lacks %q: %q", want, q.PlainText)
		}
	}
	// Replying to the question (no mention needed) answers it in the same
	// conversation.
	tg.PushMessage(faketelegram.ReplyTo(faketelegram.Group(group, ann, "Bergen"), q.Message))
	run.waitFinal(tg, group.ID, "You chose Bergen")
	last := model.Requests()[len(model.Requests())-1]
	if got := last.Roles(); got != "system,user,assistant,tool,assistant,user" {
		t.Errorf("the answer continued with %s", got)
	}
}

func TestConsoleLoopDetectionFromConfig(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "weather", Arguments: `{"city":"Oslo"}`}}}
	})
	cfg := testConfig(t, model, t.TempDir())
	cfg.Agent.LoopDetection = config.LoopDetection{Window: 10, WarnRepeats: 2, StopRepeats: 3, ToolWarn: 30, ToolStop: 50}
	s := startChat(t, cfg, weatherTool())
	s.say("weather please")
	s.screen.waitFor(t, "repeating the same step", 1)
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3 (warned at 2, stopped at 3)", len(reqs))
	}
	if !strings.Contains(reqs[2].Last().Content, "[Note from the system]") {
		t.Errorf("no warning before the third call: %q", reqs[2].Last().Content)
	}
}

// pngBytes is a small real PNG.
func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestTelegramVisionAttachment(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	pic := pngBytes(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		switch last := r.Last(); {
		case last.Role == "user" && strings.Contains(last.Content, "what is in the picture"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "view_image", Arguments: `{"path":"/mnt/user-data/uploads/dot.png"}`}}}
		case strings.Contains(last.Content, "view_image"):
			return fakeopenai.Turn{Text: "A red dot."}
		}
		return fakeopenai.Turn{Text: "Anything else?"}
	})
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) {
		c.Models[0].SupportsVision = true
	})
	tg.AddFile("pic-1", pic)
	msg := faketelegram.Private(ann, "")
	msg.Caption = "what is in the picture?"
	msg.Document = &faketelegram.Document{FileID: "pic-1", FileUniqueID: "p1", FileName: "dot.png", FileSize: len(pic)}
	tg.PushMessage(msg)
	run.waitFinal(tg, ann.ID, "A red dot.")
	tg.PushMessage(faketelegram.Private(ann, "thanks"))
	run.waitFinal(tg, ann.ID, "Anything else?")

	reqs := model.Requests()
	if !slices.Contains(reqs[0].ToolNames(), "view_image") {
		t.Fatalf("view_image not offered to a vision model: %v", reqs[0].ToolNames())
	}
	want := `"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(pic) + `"`
	if body := string(reqs[1].Body); !strings.Contains(body, `"type":"image_url"`) || !strings.Contains(body, want) {
		t.Errorf("the image is not attached to the next call:\n%.600s", body)
	}
	if strings.Contains(string(reqs[2].Body), "image_url") {
		t.Error("the image stayed in the history")
	}
}

func TestNoViewImageWithoutVision(t *testing.T) {
	model := fakeopenai.New(t)
	model.Script(fakeopenai.Turn{Text: "ok"})
	s := startChat(t, testConfig(t, model, t.TempDir()))
	s.say("hi")
	s.screen.waitFor(t, "ok", 1)
	if slices.Contains(model.Requests()[0].ToolNames(), "view_image") {
		t.Error("view_image offered to a model without vision")
	}
}
