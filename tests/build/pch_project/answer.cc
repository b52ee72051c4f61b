#include "answer.h"
std::string Answer() { return std::to_string(kAnswer); }
