// gander-init's image (init_main.cc), embedded in gander, as a sealed memfd the sandbox init
// execs once the extension runs (child_setup.cc).
#pragma once

namespace gander::sandbox {

// A close-on-exec, sealed, executable memfd holding gander-init, made once per gander process
// and kept (numbered >= 10, so the init's dup2s onto 0-4 never clobber it); -1 when this build
// has no image or the kernel refuses (the init then runs the same loop in gander's own image).
int InitImageFd();

}  // namespace gander::sandbox
