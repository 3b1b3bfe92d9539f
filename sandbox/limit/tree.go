package limit

import (
	"os"
	"strconv"
	"strings"
)

// treeUsage counts the processes of the tree under pid (pid included) and
// the memory they hold resident, from /proc. It is how limits are watched
// where no cgroup counts for us: every process a command starts stays
// below the sandbox's pid 1 (orphans are re-parented to it).
func treeUsage(pid int) (procs int, rss int64) {
	page := int64(os.Getpagesize())
	stack := []int{pid}
	for len(stack) > 0 && procs < 1<<16 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dir := "/proc/" + strconv.Itoa(p)
		statm, err := os.ReadFile(dir + "/statm")
		if err != nil {
			continue // gone
		}
		procs++
		if f := strings.Fields(string(statm)); len(f) > 1 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			rss += n * page
		}
		tasks, _ := os.ReadDir(dir + "/task")
		for _, t := range tasks {
			b, _ := os.ReadFile(dir + "/task/" + t.Name() + "/children")
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					stack = append(stack, n)
				}
			}
		}
	}
	return procs, rss
}
