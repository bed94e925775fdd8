package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket"
)

const bashCompletion = `# bash completion for orket: source <(orket completion bash)
_orket_complete() {
  local cur opts
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _orket_complete orket
`

const zshCompletion = `#compdef orket
# zsh completion for orket: orket completion zsh > "${fpath[1]}/_orket"
_orket() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _orket orket
`

func completionCommand(o *options, result *any) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		UsageText: "source <(orket completion bash)\norket completion zsh > \"${fpath[1]}/_orket\"\norket completion fish > ~/.config/fish/completions/orket.fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return orket.Errorf(orket.EUsage, "orket completion bash|zsh|fish", "completion needs a shell name")
			}
			var script string
			switch c.Args().First() {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				script = s
			default:
				return orket.Errorf(orket.EUsage, "orket completion bash|zsh|fish", "no completion for shell %q", c.Args().First())
			}
			if o.json {
				*result = map[string]any{"code": orket.OK, "script": script}
				return nil
			}
			_, err := fmt.Fprint(o.stdout, script)
			return err
		},
	}
}
