"""The terminal's shell, started in the project directory, with OSC 133
prompt marks for bash and zsh.

The marks (ESC ] 133 ; A|B|C|D[;status] BEL, the "FinalTerm" sequences that
VS Code, iTerm2 and others read) tell the browser where a prompt starts (A)
and ends (B), where a command's output starts (C) and where it ended, with its
exit status (D). The panel's "Attach last command and output" reads the
command and output between them from its screen buffer.

How they get into the shell. The exec request is one string that sshd runs
through the login shell (`$SHELL -c`). It is a fixed POSIX-sh script plus
quoted arguments (the project directory, the rc files), so nothing typed by a
person or a model is ever spliced into code. The script changes into the
project directory, writes the rc files into a fresh `mktemp -d` directory
with printf (no writable $HOME needed) and, by the shell's own name:
- bash: `bash --rcfile RC -i`. The rc removes its directory, reads what a
  login bash reads (/etc/profile, then the first of ~/.bash_profile,
  ~/.bash_login, ~/.profile), then adds the hooks;
- zsh: ZDOTDIR points at the directory, whose .zshenv/.zprofile/.zshrc/.zlogin
  read the person's own (from their $ZDOTDIR or $HOME) and add the hooks;
  .zlogin puts ZDOTDIR back and removes the directory;
- any other shell: a plain login shell, no marks (the panel then attaches the
  visible screen and says so).
Environment variables cannot carry any of this: sshd accepts only LANG and
LC_* by default. Nothing is typed into the shell, so nothing echoes and
nothing lands in the history.

The exit status is taken at the start of the first PROMPT_COMMAND entry (bash
restores $? after its DEBUG trap); C is printed from the DEBUG trap for the
first simple command after the prompt only (`__jarvis_armed`, set by the last
PROMPT_COMMAND entry), since DEBUG also fires for every command inside
PROMPT_COMMAND; an empty command line runs no command, and the DEBUG trap
for the next PROMPT_COMMAND is recognised by name. Prompt frameworks that
rebuild PS1 on every prompt lose the B mark (the command line is then read
from the prompt's A mark, prompt included).
"""

from __future__ import annotations

from apps.agents.ssh import quote

_START = r"""
if [ -n "$1" ] && ! cd -- "$1" 2>/dev/null; then
  printf 'jarvis: cannot enter %s; the shell starts in %s\r\n' "$1" "$PWD"
fi
shell=${SHELL:-/bin/sh}
case "${shell##*/}" in
  bash)
    if d=$(mktemp -d 2>/dev/null) && printf '%s\n' "$2" >"$d/bashrc"; then
      exec "$shell" --rcfile "$d/bashrc" -i
    fi
    ;;
  zsh)
    if d=$(mktemp -d 2>/dev/null) && printf '%s\n' "$3" >"$d/.zshenv" \
      && printf '%s\n' "$4" >"$d/.zprofile" && printf '%s\n' "$5" >"$d/.zshrc" \
      && printf '%s\n' "$6" >"$d/.zlogin"; then
      JARVIS_ZDOTDIR=${ZDOTDIR-$HOME} ZDOTDIR=$d exec "$shell" -l -i
    fi
    ;;
esac
exec "$shell" -l
"""

_BASH_RC = r"""
rm -rf -- "${BASH_SOURCE[0]%/*}"
if [ -f /etc/profile ]; then . /etc/profile; fi
for __jarvis_f in ~/.bash_profile ~/.bash_login ~/.profile; do
  if [ -f "$__jarvis_f" ]; then . "$__jarvis_f"; break; fi
done
unset __jarvis_f
__jarvis_ran=0
__jarvis_armed=0
__jarvis_precmd() {
  local status=$?
  __jarvis_armed=0
  if [ "$__jarvis_ran" = 1 ]; then printf '\033]133;D;%s\007' "$status"; fi
  __jarvis_ran=0
  printf '\033]133;A\007'
}
__jarvis_arm() { __jarvis_armed=1; }
__jarvis_preexec() {
  if [ "$__jarvis_armed" = 1 ] && [ "$BASH_COMMAND" != __jarvis_precmd ]; then
    __jarvis_armed=0
    __jarvis_ran=1
    printf '\033]133;C\007'
  fi
}
trap '__jarvis_preexec' DEBUG
PROMPT_COMMAND="__jarvis_precmd${PROMPT_COMMAND:+;$PROMPT_COMMAND};__jarvis_arm"
PS1="${PS1}\[\033]133;B\007\]"
"""

# zsh reads $ZDOTDIR/.zshenv, then (login) .zprofile, (interactive) .zshrc,
# (login) .zlogin. Each shim reads the person's own file with their ZDOTDIR
# in place, then points ZDOTDIR back at ours for the next one.
_ZSH_SHIM = r"""
ZDOTDIR=$__jarvis_user_zdotdir
if [[ -f $ZDOTDIR/{name} ]]; then source $ZDOTDIR/{name}; fi
__jarvis_user_zdotdir=$ZDOTDIR
ZDOTDIR=$__jarvis_dir
"""

_ZSH_ENV = r"""
__jarvis_dir=$ZDOTDIR
__jarvis_user_zdotdir=${JARVIS_ZDOTDIR:-$HOME}
unset JARVIS_ZDOTDIR
""" + _ZSH_SHIM.replace("{name}", ".zshenv")

_ZSH_RC = (
    _ZSH_SHIM.replace("{name}", ".zshrc")
    + r"""
__jarvis_ran=0
__jarvis_precmd() {
  local jarvis_status=$?
  if (( __jarvis_ran )); then printf '\033]133;D;%s\007' $jarvis_status; fi
  __jarvis_ran=0
  printf '\033]133;A\007'
}
__jarvis_preexec() { __jarvis_ran=1; printf '\033]133;C\007'; }
precmd_functions=(__jarvis_precmd $precmd_functions)
preexec_functions+=(__jarvis_preexec)
PS1="$PS1%{$(printf '\033]133;B\007')%}"
"""
)

_ZSH_LOGIN = (
    _ZSH_SHIM.replace("{name}", ".zlogin")
    + r"""
ZDOTDIR=$__jarvis_user_zdotdir
rm -rf -- $__jarvis_dir
unset __jarvis_dir __jarvis_user_zdotdir
"""
)


def shell_command(project_dir: str) -> str:
    """The exec request that starts the terminal's shell in `project_dir`."""
    args = [
        project_dir,
        _BASH_RC,
        _ZSH_ENV,
        _ZSH_SHIM.replace("{name}", ".zprofile"),
        _ZSH_RC,
        _ZSH_LOGIN,
    ]
    return f"exec /bin/sh -c {quote(_START)} jarvis " + " ".join(quote(a) for a in args)


MARK = b"\x1b]133;"
