package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// secret stands for orket's memory: what a sandboxed command must not be
// able to change (a path orket writes later, a decision it took).
var secret = [32]byte{'o', 'r', 'k', 'e', 't'}

// memoryChildVar makes this test binary, started again, the command that
// tries to write into its parent's memory.
const memoryChildVar = "ORKET_TEST_MEMORY_CHILD"

func init() {
	if addr, ok := os.LookupEnv(memoryChildVar); ok {
		os.Exit(writeParentMemory(addr))
	}
}

// writeParentMemory tries to write into the memory of its parent through
// every one of the parent's threads (process_vm_writev, which a ptrace
// access check guards) and prints what each attempt gave.
func writeParentMemory(addr string) int {
	at, err := strconv.ParseUint(addr, 10, 64)
	if err != nil {
		return 2
	}
	ppid := os.Getppid()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(ppid) + "/task")
	if err != nil {
		fmt.Println("no tasks:", err)
		return 2
	}
	payload := []byte("ESCAPED")
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		n, err := unix.ProcessVMWritev(tid, []unix.Iovec{{Base: &payload[0], Len: uint64(len(payload))}},
			[]unix.RemoteIovec{{Base: uintptr(at), Len: len(payload)}}, 0)
		fmt.Printf("thread %d: wrote %d: %v\n", tid, n, err)
	}
	return 0
}

// TestCommandCannotWriteOrketsMemory: a sandboxed command shares no
// Landlock domain with any thread of orket, so the kernel refuses it
// access to orket's memory through each of them: orket's decisions and
// the paths it later writes stay its own. (Restricting a thread of orket
// and starting the command from it would let the command write orket's
// memory through that thread, and escape.)
func TestCommandCannotWriteOrketsMemory(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	before := secret
	cmd := exec.Command(self)
	cmd.Dir = f.root
	cmd.Env = append(f.env(), memoryChildVar+"="+strconv.FormatUint(uint64(uintptr(unsafe.Pointer(&secret[0]))), 10))
	if err := s.Apply(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if secret != before {
		t.Fatalf("the sandboxed command wrote orket's memory:\n%s", out)
	}
	if !strings.Contains(string(out), "thread ") || strings.Contains(string(out), ": <nil>") {
		t.Errorf("every attempt should have been refused:\n%s", out)
	}
}
