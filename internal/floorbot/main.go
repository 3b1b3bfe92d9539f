// Command floorbot is the least a Telegram bot can do to answer through a
// model: it long-polls getUpdates with go-telegram/bot, sends each text to
// the model's streaming chat completions, and sends back what the model
// wrote. It stores nothing, runs no agent and checks nothing.
//
// It exists for one measurement: BenchmarkEndToEndFloor runs it against
// the same fake Telegram and fake model as BenchmarkEndToEnd runs
// deerflow, so the part of the end-to-end time that belongs to the fakes,
// the client library, loopback HTTP and this machine's scheduling is
// measured rather than estimated.
//
//	floorbot TELEGRAM_API_URL TOKEN MODEL_BASE_URL
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: floorbot TELEGRAM_API_URL TOKEN MODEL_BASE_URL")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	model := strings.TrimSuffix(os.Args[3], "/") + "/chat/completions"
	b, err := tgbot.New(os.Args[2], tgbot.WithServerURL(os.Args[1]),
		tgbot.WithDefaultHandler(func(ctx context.Context, b *tgbot.Bot, u *models.Update) {
			if u.Message == nil || u.Message.Text == "" {
				return
			}
			answer, err := ask(ctx, model, u.Message.Text)
			if err != nil {
				fmt.Fprintln(os.Stderr, "model:", err)
				return
			}
			if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: u.Message.Chat.ID, Text: answer}); err != nil {
				fmt.Fprintln(os.Stderr, "sendMessage:", err)
			}
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b.Start(ctx)
}

// ask sends text to the model as a streamed chat completion and returns
// the text of the answer.
func ask(ctx context.Context, url, text string) (string, error) {
	body, _ := json.Marshal(map[string]any{"model": "m", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": text}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(data), &chunk) == nil && len(chunk.Choices) > 0 {
			out.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	return out.String(), sc.Err()
}
