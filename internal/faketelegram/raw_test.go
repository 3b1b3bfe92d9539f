package faketelegram_test

// These tests check the exact wire format with plain HTTP.

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/faketelegram"
)

func post(t *testing.T, u, contentType, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(u, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestWireFormat(t *testing.T) {
	s := faketelegram.New(t, token)
	api := s.URL + "/bot" + token + "/"
	form := "application/x-www-form-urlencoded"
	for _, c := range []struct {
		url, ct, body string
		status        int
		want          string
	}{
		{s.URL + "/bot1:bad/getMe", form, "", 401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`},
		{api + "frobnicate", form, "", 404, `{"ok":false,"error_code":404,"description":"Not Found"}`},
		{api + "getme", form, "", 200, `{"ok":true,"result":{"id":777000111,"is_bot":true,"first_name":"DeerFlow","username":"deerflow_test_bot",` +
			`"can_join_groups":true,"can_read_all_group_messages":false,"supports_inline_queries":false}}`},
		{api + "sendMessage", form, "chat_id=999&text=hi", 400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`},
		{api + "sendMessage", "application/json", `{"chat_id":999,"text":""}`, 400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`},
		{api + "getUpdates?offset=-1", "", "", 200, `{"ok":true,"result":[]}`},
	} {
		status, body := post(t, c.url, c.ct, c.body)
		if status != c.status || body != c.want {
			t.Errorf("%s %s:\n got %d %s\nwant %d %s", c.url, c.body, status, body, c.status, c.want)
		}
	}

	s.PushMessage(faketelegram.Message{MessageID: 77, Date: 1700000000, From: &ann,
		Chat: faketelegram.Chat{ID: 999, Type: "private", FirstName: "Ann"}, Text: "hello"})
	want := `{"ok":true,"result":[{"update_id":1000,"message":{"message_id":77,"from":{"id":999,"is_bot":false,"first_name":"Ann","username":"ann"},` +
		`"date":1700000000,"chat":{"id":999,"type":"private","first_name":"Ann"},"text":"hello"}}]}`
	if status, body := post(t, api+"getUpdates", form, "offset=1000&timeout=0"); status != 200 || body != want {
		t.Fatalf("getUpdates:\n got %d %s\nwant %s", status, body, want)
	}

	// Form and JSON bodies both work; results are full messages.
	status, body := post(t, api+"sendMessage", "application/json", `{"chat_id":999,"text":"a &lt; b","parse_mode":"HTML","reply_parameters":{"message_id":77}}`)
	if status != 200 || !strings.Contains(body, `"message_id":78,"from":{"id":777000111,"is_bot":true`) || !strings.Contains(body, `"text":"a < b"`) ||
		!strings.Contains(body, `"reply_to_message":{"message_id":77,`) {
		t.Fatalf("sendMessage: %d %s", status, body)
	}
	if c := s.CallsOf("sendMessage"); c[len(c)-1].Params["reply_parameters"] != `{"message_id":77}` || c[len(c)-1].Params["chat_id"] != "999" {
		t.Fatalf("params = %v", c[len(c)-1].Params)
	}
	if status, body = post(t, api+"editMessageText", form, url.Values{"chat_id": {"999"}, "message_id": {"78"}, "text": {"b"}}.Encode()); status != 200 ||
		!strings.Contains(body, `"edit_date":`) {
		t.Fatalf("editMessageText: %d %s", status, body)
	}

	s.FailNext("sendChatAction", faketelegram.Failure{Code: 429, RetryAfter: 3})
	status, body = post(t, api+"sendChatAction", form, "chat_id=999&action=typing")
	if status != 429 || body != `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}` {
		t.Fatalf("429: %d %s", status, body)
	}
	s.FailNext("sendChatAction", faketelegram.Failure{Code: 502, Body: "<html>502 Bad Gateway</html>"})
	if status, body = post(t, api+"sendChatAction", form, "chat_id=999&action=typing"); status != 502 || !strings.HasPrefix(body, "<html>") {
		t.Fatalf("502: %d %s", status, body)
	}
}

func TestLongPoll(t *testing.T) {
	s := faketelegram.New(t, token)
	api := s.URL + "/bot" + token + "/getUpdates"
	form := "application/x-www-form-urlencoded"

	begin := time.Now()
	if status, body := post(t, api, form, "timeout=1"); status != 200 || body != `{"ok":true,"result":[]}` || time.Since(begin) < time.Second {
		t.Fatalf("empty poll: %d %s after %v", status, body, time.Since(begin))
	}

	// A held poll returns as soon as an update is pushed.
	done := make(chan string)
	go func() {
		resp, err := http.Post(api, form, strings.NewReader("timeout=30"))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	s.WaitFor(func() bool { return len(s.Offsets()) == 2 })
	s.PushMessage(faketelegram.Private(ann, "wake up"))
	if body := <-done; !strings.Contains(body, `"text":"wake up"`) {
		t.Fatalf("held poll got %s", body)
	}

	// Unconfirmed updates come again; a higher offset confirms them.
	s.PushMessage(faketelegram.Private(ann, "two"))
	if _, body := post(t, api, form, "offset=0&limit=1"); !strings.Contains(body, `"update_id":1000`) || strings.Contains(body, "1001") {
		t.Fatalf("limit 1: %s", body)
	}
	if _, body := post(t, api, form, "offset=1001"); !strings.Contains(body, `"update_id":1001`) || strings.Contains(body, "1000") {
		t.Fatalf("offset 1001: %s", body)
	}
	if _, body := post(t, api, form, `offset=1002&allowed_updates=["callback_query"]`); body != `{"ok":true,"result":[]}` {
		t.Fatalf("offset 1002: %s", body)
	}
	// allowed_updates persists: this message is dropped.
	s.PushMessage(faketelegram.Private(ann, "filtered"))
	if _, body := post(t, api, form, "offset=1002"); body != `{"ok":true,"result":[]}` || len(s.Pending()) != 0 {
		t.Fatalf("filtered: %s", body)
	}
	if o := s.Offsets(); len(o) != 6 || o[5] != 1002 {
		t.Fatalf("offsets = %v", o)
	}
}

func TestMultipartGetMeWithoutFields(t *testing.T) {
	s := faketelegram.New(t, token)
	// The real client posts an empty multipart body for methods without parameters.
	status, body := post(t, s.URL+"/bot"+token+"/getMe", "multipart/form-data; boundary=xyz", "")
	if status != 200 || !strings.Contains(body, `"username":"deerflow_test_bot"`) {
		t.Fatalf("%d %s", status, body)
	}
}
