# memplan_add_library(NAME DEPS...): a library from every .cc in the folder,
# public headers installed under include/memplan/<folder>/.
function(memplan_add_library name)
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB _hdrs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  add_library(${name} STATIC ${_srcs} ${_hdrs})
  add_library(memplan::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/memplan>)
  target_link_libraries(${name} PUBLIC ${ARGN})
  get_filename_component(_folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  install(FILES ${_hdrs} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memplan/${_folder})
  install(TARGETS ${name} EXPORT memplanTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
