#pragma once
#include <string>
constexpr int kAnswer = 42;
std::string Answer();
