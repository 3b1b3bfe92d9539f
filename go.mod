module github.com/deerflow/deerflow

go 1.26.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/sashabaranov/go-openai v1.43.0
	go.etcd.io/bbolt v1.5.0
	go.yaml.in/yaml/v3 v3.0.6
)

require golang.org/x/sys v0.45.0 // indirect
