#include "app/cli/command.h"
namespace ws::cli { void registerSynth(CommandRegistry&) {} }
